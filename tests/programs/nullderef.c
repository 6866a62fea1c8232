/* Dereferences NULL: the process must die with SIGSEGV, and only the process. */
#include <stdio.h>

int main(void)
{
	volatile int *p = NULL;

	printf("dereferencing NULL\n");
	fflush(stdout);
	return *p;
}
