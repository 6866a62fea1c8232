/* The address /proc/kallsyms gives NAME, or 0. */
#include <stdio.h>
#include <string.h>

static unsigned long from_kallsyms(const char *name)
{
	char line[256], symbol[128];
	unsigned long address = 0, at;
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %*s %127s", &at, symbol) == 2 && !strcmp(symbol, name))
			address = at;
	if (f)
		fclose(f);
	return address;
}
