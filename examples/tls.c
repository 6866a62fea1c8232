/* __thread variables with initializers, and zero-initialised TLS, in the main thread. */
#include <stdio.h>
#include <string.h>

__thread int counter = 42;
__thread char label[16] = "initialised";
__thread long zeroed[64];
static __thread double aligned_value __attribute__((aligned(64))) = 2.5;

int main(void)
{
	long sum = 0;

	for (int i = 0; i < 64; i++)
		sum += zeroed[i];
	printf("counter %d, label %s, zeroed sum %ld, aligned %.1f (aligned: %d)\n", counter,
	       label, sum, aligned_value, (int)(((unsigned long)&aligned_value & 63) == 0));
	counter += 1;
	strcpy(label, "modified");
	zeroed[63] = 7;
	printf("counter %d, label %s, zeroed[63] %ld\n", counter, label, zeroed[63]);
	return 0;
}
