/*
 * Leaves files in /out for `ukl run --out HOSTDIR`: a line that says at
 * which privilege level it was written, and a file in a subdirectory.
 * With the argument "crash" it then dereferences NULL: what it wrote must
 * still reach the host.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	unsigned short cs;
	FILE *f;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	f = fopen("/out/result.txt", "w");
	if (!f || mkdir("/out/data", 0755)) {
		perror("/out");
		return 1;
	}
	fprintf(f, "written at CPL%d\n", cs & 3);
	fclose(f);
	f = fopen("/out/data/numbers.txt", "w");
	for (int i = 0; f && i < 1000; i++)
		fprintf(f, "%d\n", i);
	if (f)
		fclose(f);
	if (argc > 1 && !strcmp(argv[1], "crash"))
		return *(volatile int *)0;
	return 0;
}
