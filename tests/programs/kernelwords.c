/*
 * Does the program's writable memory hold an address in kernel text once
 * the C library has run its kernel-facing paths?  A disclosure bug of the
 * program would then reveal the KASLR offset.  The stack is left out:
 * return thunks and the entry leave addresses below its pointer.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kallsyms.h"

static int scan(unsigned long start, unsigned long end, unsigned long lo, unsigned long hi,
		const char *what)
{
	int found = 0;

	for (unsigned long *w = (unsigned long *)start; w < (unsigned long *)end; w++)
		if (*w >= lo && *w < hi) {
			printf("kernel text address %#lx at %p (%s)\n", *w, (void *)w, what);
			found++;
		}
	return found;
}

int main(void)
{
	unsigned long lo = from_kallsyms("_stext"), hi = from_kallsyms("_etext");
	unsigned long start, end;
	char line[512], perms[5], what[256];
	struct timespec now;
	int found = 0, fd;
	FILE *maps;

	if (!lo || !hi) {
		printf("no _stext or _etext in /proc/kallsyms\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_REALTIME, &now);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd >= 0)
		close(fd);
	getppid();

	maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof(line), maps)) {
		what[0] = 0;
		if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %255s", &start, &end, perms, what) < 3)
			continue;
		if (perms[0] != 'r' || perms[1] != 'w' || !strcmp(what, "[stack]"))
			continue;
		found += scan(start, end, lo, hi, what[0] ? what : "anonymous");
	}
	if (maps)
		fclose(maps);
	printf("kernel text addresses in writable memory: %d\n", found);
	return 0;
}
