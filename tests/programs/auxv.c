/*
 * What the kernel tells a program at its start, in the auxiliary vector:
 * the entries that rseq users, sigaltstack sizing and CPU dispatch read.
 * The same as on Linux, but AT_SYSINFO_EHDR (a UKL program has no vDSO).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/auxv.h>

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif
#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27
#define AT_RSEQ_ALIGN 28
#endif

static void show(const char *name, unsigned long type)
{
	unsigned long value;

	errno = 0;
	value = getauxval(type);
	if (errno)
		printf("%s: missing\n", name);
	else if (type == AT_PLATFORM)
		printf("%s: %s\n", name, (const char *)value);
	else if (type == AT_MINSIGSTKSZ || type == AT_HWCAP2)
		printf("%s: %s\n", name, value ? "nonzero" : "0");
	else
		printf("%s: %lu\n", name, value);
}

int main(void)
{
	show("AT_PLATFORM", AT_PLATFORM);
	show("AT_HWCAP2", AT_HWCAP2);
	show("AT_MINSIGSTKSZ", AT_MINSIGSTKSZ);
	show("AT_RSEQ_FEATURE_SIZE", AT_RSEQ_FEATURE_SIZE);
	show("AT_RSEQ_ALIGN", AT_RSEQ_ALIGN);
	printf("AT_SYSINFO_EHDR: %s\n", getauxval(AT_SYSINFO_EHDR) ? "present" : "missing");
	return 0;
}
