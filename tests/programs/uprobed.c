/*
 * A function that a uprobe (set up before the program starts) probes, then
 * the probe's hits as the kernel counts them in uprobe_profile.  On Linux
 * the probe fires; a UKL process's code runs at CPL0, where it gets none.
 */
#include <stdio.h>

__attribute__((noinline)) int probed(int x)
{
	return x * 2 + 1;
}

int main(void)
{
	FILE *f = fopen("/sys/kernel/tracing/uprobe_profile", "r");
	char line[256], file[128], event[64];
	unsigned long hits;
	volatile int sum = 0;

	for (int i = 0; i < 3; i++)
		sum += probed(i);
	printf("sum %d\n", sum);
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %63s %lu", file, event, &hits) == 3)
			printf("%s hits: %lu\n", event, hits);
	return 0;
}
