/*
 * For the ordinary executable that ukl-cc writes beside the UKL program (so
 * that configure scripts can run what they build): code whose inline
 * SYSCALL became `cli; call __ukl_syscall` links, and traps at the cli at
 * CPL3 before it gets here.
 */
	.text
	.globl	__ukl_syscall
	.type	__ukl_syscall, @function
__ukl_syscall:
	ud2
	.size	__ukl_syscall, . - __ukl_syscall
	.section .note.GNU-stack, "", @progbits
