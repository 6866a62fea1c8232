/*
 * ARCH_SET_GS: under Linux it gives the program a GS base of its own.  UKL
 * code runs on the kernel's GS base and cannot have one, so the call fails
 * with EPERM (and ukl-cc refuses code that uses %gs).  ARCH_SET_FS, which
 * musl's TLS needs, works as on Linux.
 */
#include <asm/prctl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void try(const char *name, int code, unsigned long arg)
{
	long r = syscall(SYS_arch_prctl, code, arg);

	printf("%s: %s\n", name, r ? strerror(errno) : "ok");
}

int main(void)
{
	unsigned long fs, gs = 1;

	try("ARCH_SET_GS", ARCH_SET_GS, 0x10000);
	try("ARCH_GET_GS", ARCH_GET_GS, (unsigned long)&gs);
	printf("GS base: %#lx\n", gs);
	try("ARCH_GET_FS", ARCH_GET_FS, (unsigned long)&fs);
	try("ARCH_SET_FS", ARCH_SET_FS, fs);
	return 0;
}
