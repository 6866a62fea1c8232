/*
 * Prints the privilege level from %cs, then reads CR0 and CR4, which only
 * CPL0 may do.  At CPL3 the read raises #GP, delivered as SIGSEGV.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

static sigjmp_buf trapped;

static void on_segv(int sig)
{
	siglongjmp(trapped, sig);
}

static unsigned int cpl(void)
{
	unsigned short cs;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	return cs & 3;
}

int main(void)
{
	unsigned long cr0, cr4, flags;

	printf("CPL %u\n", cpl());
	__asm__ volatile("pushf; pop %0" : "=r"(flags));
	printf("EFLAGS.AC = %lu\n", (flags >> 18) & 1);

	signal(SIGSEGV, on_segv);
	if (sigsetjmp(trapped, 1)) {
		printf("reading CR0 trapped (SIGSEGV): not allowed at this privilege level\n");
		return 0;
	}
	__asm__ volatile("mov %%cr0, %0" : "=r"(cr0));
	__asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
	printf("CR0 = %#lx (PE=%lu PG=%lu)\n", cr0, cr0 & 1, (cr0 >> 31) & 1);
	printf("CR4.SMEP = %lu, CR4.SMAP = %lu\n", (cr4 >> 20) & 1, (cr4 >> 21) & 1);
	return 0;
}
