/*
 * What Linux gives a program for each instruction that faults at CPL3:
 * SIGSEGV with the trap number and error code of the #GP (or #OF) in the
 * signal context, at the instruction's own address, and then the program
 * goes on.  Under UKL, ukl-cc assembles these as a UD1 that names the fault
 * and the kernel sends the same signal; a UD2 still gives SIGILL.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <ucontext.h>

static sigjmp_buf back;
static void *insn_ip, *next_ip;
static siginfo_t got;
static greg_t trapno, err, ip;

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	got = *si;
	trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	err = uc->uc_mcontext.gregs[REG_ERR];
	ip = uc->uc_mcontext.gregs[REG_RIP];
	siglongjmp(back, 1);
}

static const char *where(void *addr)
{
	return !addr ? "0" : addr == insn_ip ? "insn" : addr == next_ip ? "next" : "other";
}

/* The addresses of the instruction and of the next one are kept before it runs. */
#define TRY(insn)							\
	do {								\
		if (!sigsetjmp(back, 1)) {				\
			__asm__ volatile("lea 1f(%%rip), %%rax\n\t"	\
					 "mov %%rax, %0\n\t"		\
					 "lea 2f(%%rip), %%rax\n\t"	\
					 "mov %%rax, %1\n"		\
					 "1:\t" insn "\n2:"		\
					 : "=m"(insn_ip), "=m"(next_ip) : : "rax", "rcx", "memory"); \
			printf("%-14s no signal\n", insn);		\
		} else {						\
			printf("%-14s %s code=%d addr=%s trapno=%lld err=%#llx ip=%s\n", \
			       insn, got.si_signo == SIGSEGV ? "SIGSEGV" : got.si_signo == SIGILL ? "SIGILL" : "?", \
			       got.si_code, where(got.si_addr), \
			       (long long)trapno, (long long)err, where((void *)ip)); \
		}							\
	} while (0)

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_NODEFER };

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	TRY("int $0x80");
	TRY("int $0x21");
	TRY("int $4");
	TRY("int $0");
	TRY("int $0xff");
	TRY("hlt");
	TRY("rdmsr");
	TRY("wrmsr");
	TRY("mov %%rax,%%cr4");
	TRY("lidt (%%rax)");
	TRY("ud2");
	printf("the program goes on\n");
	return 0;
}
