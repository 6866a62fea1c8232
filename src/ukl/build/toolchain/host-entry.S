/*
 * For the ordinary executable that ukl-cc writes beside the UKL program (so
 * that configure scripts can run what they build): code whose inline
 * SYSCALL became `cli; call __ukl_syscall` links, and traps at the cli at
 * CPL3 before it gets here; the UKL C library's shortcuts link too.
 */
	.text
	.globl	__ukl_syscall
	.type	__ukl_syscall, @function
__ukl_syscall:
	ud2
	.size	__ukl_syscall, . - __ukl_syscall

/* The UKL shortcuts (<ukl/shortcut.h>) are the system calls they stand for. */
	.globl	ukl_tcp_send
	.type	ukl_tcp_send, @function
ukl_tcp_send:
	jmp	send
	.size	ukl_tcp_send, . - ukl_tcp_send
	.globl	ukl_tcp_recv
	.type	ukl_tcp_recv, @function
ukl_tcp_recv:
	jmp	recv
	.size	ukl_tcp_recv, . - ukl_tcp_recv
	.section .note.GNU-stack, "", @progbits
