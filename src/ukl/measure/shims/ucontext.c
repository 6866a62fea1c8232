/*
 * getcontext(), setcontext(), swapcontext() and makecontext() for x86-64,
 * which musl declares but leaves out; sigaltstack/sas switches contexts in
 * and out of a signal handler with them.  A context holds what a call
 * preserves: the callee-saved registers, the stack pointer, the return
 * address, and the signal mask; also the argument registers, which
 * makecontext() fills.  No floating-point state, not even the MXCSR and
 * x87 control words a call preserves: sas changes neither.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <ucontext.h>

/* Offsets in musl's ucontext_t: uc_mcontext.gregs, and uc_sigmask */
#define GREGS	"40"
#define SIGMASK	"296"

asm(".macro ctx_save c\n"		/* the caller's registers, into \c */
    "	movq %r12, " GREGS "+8*4(\\c)\n"
    "	movq %r13, " GREGS "+8*5(\\c)\n"
    "	movq %r14, " GREGS "+8*6(\\c)\n"
    "	movq %r15, " GREGS "+8*7(\\c)\n"
    "	movq %rdi, " GREGS "+8*8(\\c)\n"
    "	movq %rsi, " GREGS "+8*9(\\c)\n"
    "	movq %rbp, " GREGS "+8*10(\\c)\n"
    "	movq %rbx, " GREGS "+8*11(\\c)\n"
    "	movq %rdx, " GREGS "+8*12(\\c)\n"
    "	movq %rcx, " GREGS "+8*14(\\c)\n"
    "	leaq 8(%rsp), %rax\n"
    "	movq %rax, " GREGS "+8*15(\\c)\n"
    "	movq (%rsp), %rax\n"
    "	movq %rax, " GREGS "+8*16(\\c)\n"
    ".endm\n"
    ".macro ctx_load c\n"		/* continue where \c (%rdx) says */
    "	movq " GREGS "+8*4(\\c), %r12\n"
    "	movq " GREGS "+8*5(\\c), %r13\n"
    "	movq " GREGS "+8*6(\\c), %r14\n"
    "	movq " GREGS "+8*7(\\c), %r15\n"
    "	movq " GREGS "+8*8(\\c), %rdi\n"
    "	movq " GREGS "+8*9(\\c), %rsi\n"
    "	movq " GREGS "+8*10(\\c), %rbp\n"
    "	movq " GREGS "+8*11(\\c), %rbx\n"
    "	movq " GREGS "+8*14(\\c), %rcx\n"
    "	movq " GREGS "+8*15(\\c), %rsp\n"
    "	pushq " GREGS "+8*16(\\c)\n"
    "	movq " GREGS "+8*12(\\c), %rdx\n"
    "	xorl %eax, %eax\n"
    "	ret\n"
    ".endm\n"
    ".text\n"
    ".globl getcontext\n"
    "getcontext:\n"
    "	ctx_save %rdi\n"
    "	leaq " SIGMASK "(%rdi), %rdx\n"	/* sigprocmask(0, NULL, &mask) */
    "	xorl %esi, %esi\n"
    "	xorl %edi, %edi\n"
    "	subq $8, %rsp\n"
    "	call sigprocmask\n"
    "	addq $8, %rsp\n"
    "	xorl %eax, %eax\n"
    "	ret\n"
    ".globl setcontext\n"
    "setcontext:\n"
    "	pushq %rdi\n"
    "	leaq " SIGMASK "(%rdi), %rsi\n"	/* sigprocmask(SIG_SETMASK, &mask, NULL) */
    "	xorl %edx, %edx\n"
    "	movl $2, %edi\n"
    "	call sigprocmask\n"
    "	popq %rdx\n"
    "	ctx_load %rdx\n"
    ".globl swapcontext\n"
    "swapcontext:\n"
    "	ctx_save %rdi\n"
    "	pushq %rsi\n"
    "	leaq " SIGMASK "(%rdi), %rdx\n"	/* sigprocmask(SIG_SETMASK, &new, &old) */
    "	leaq " SIGMASK "(%rsi), %rsi\n"
    "	movl $2, %edi\n"
    "	call sigprocmask\n"
    "	popq %rdx\n"
    "	ctx_load %rdx\n"
    /* Where a function that makecontext() set up returns: to uc_link, kept in rbx */
    "ctx_return:\n"
    "	movq %rbx, %rdi\n"
    "	testq %rdi, %rdi\n"
    "	jz 1f\n"
    "	call setcontext\n"
    "1:	xorl %edi, %edi\n"
    "	call exit\n");

void ctx_return(void);

void makecontext(ucontext_t *ucp, void (*func)(), int argc, ...)
{
	static const int arg_regs[] = { REG_RDI, REG_RSI, REG_RDX, REG_RCX, REG_R8, REG_R9 };
	greg_t *gregs = ucp->uc_mcontext.gregs;
	unsigned long *sp;
	va_list ap;
	int i;

	sp = (unsigned long *)(((unsigned long)ucp->uc_stack.ss_sp + ucp->uc_stack.ss_size) & -16UL);
	*--sp = (unsigned long)ctx_return;	/* func's return address, as a call leaves it */
	gregs[REG_RSP] = (greg_t)sp;
	gregs[REG_RIP] = (greg_t)func;
	gregs[REG_RBX] = (greg_t)ucp->uc_link;
	va_start(ap, argc);
	for (i = 0; i < argc && i < 6; i++)
		gregs[arg_regs[i]] = va_arg(ap, greg_t);
	va_end(ap);
}
