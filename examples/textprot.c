/*
 * mprotect() on the program's own code.  Linux lets a program change the
 * protection of its text mapping, and a program that only re-states it
 * (read and execute) goes on as before.  A UKL program's text is kernel
 * text mapped for CPL0, so a change that would make it something else is
 * refused (EACCES), and the text stays what it was: the program goes on.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static int __attribute__((noinline)) f(int x)
{
	return 3 * x + 1;
}

/* The mapping of /proc/self/maps that holds ADDR. */
static int mapping_of(void *addr, unsigned long *start, unsigned long *end)
{
	unsigned long a = (unsigned long)addr;
	char line[512];
	FILE *maps = fopen("/proc/self/maps", "r");
	int found = 0;

	while (maps && !found && fgets(line, sizeof(line), maps))
		found = sscanf(line, "%lx-%lx", start, end) == 2 && *start <= a && a < *end;
	if (maps)
		fclose(maps);
	return found;
}

static const char *try(unsigned long start, unsigned long end, int prot)
{
	return mprotect((void *)start, end - start, prot) ? strerror(errno) : "ok";
}

int main(void)
{
	int (*volatile fp)(int) = f;
	unsigned long start, end;

	if (!mapping_of((void *)f, &start, &end)) {
		printf("no mapping holds f\n");
		return 1;
	}
	printf("mprotect(text, PROT_READ | PROT_EXEC): %s\n",
	       try(start, end, PROT_READ | PROT_EXEC));
	printf("f(5) = %d\n", fp(5));
	printf("mprotect(text, PROT_EXEC): %s\n", try(start, end, PROT_EXEC));
	printf("f(5) = %d\n", fp(5));
	return 0;
}
