/*
 * Where the kernel is, as /proc/kallsyms says and as this program's own
 * references to it say.  The program is linked against the kernel's
 * link-time addresses; under KASLR (UKL_KERNEL=ukl-mitigated) boot moves
 * every reference with the kernel: an address in the code, a pointer in
 * the data, and the calls of its system calls.  (The kernel's clock reader
 * is one it may name; a pointer to it must be 64 bits wide, since the
 * small code model's 32-bit ones cannot hold a kernel address.)
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <unistd.h>

#include "kallsyms.h"

extern char __ukl_vdso_clock_gettime[];
static char *volatile in_data = __ukl_vdso_clock_gettime;

static const char *same(unsigned long a, unsigned long b)
{
	return a == b ? "the kernel's" : "elsewhere";
}

int main(void)
{
	unsigned long kernel = from_kallsyms("__ukl_vdso_clock_gettime");
	char *in_code;
	struct timespec now;

	__asm__ volatile("mov $__ukl_vdso_clock_gettime, %0" : "=r"(in_code));
	printf("__ukl_vdso_clock_gettime at %#lx\n", kernel);
	printf("address in the code: %s\n", same((unsigned long)in_code, kernel));
	printf("pointer in the data: %s\n", same((unsigned long)in_data, kernel));
	printf("calls reach the kernel: getppid() = %d, clock_gettime() = %d\n",
	       getppid(), clock_gettime(CLOCK_MONOTONIC, &now));
	return kernel ? 0 : 1;
}
