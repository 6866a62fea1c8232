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
	.globl	ukl_tcp_sendmsg
	.type	ukl_tcp_sendmsg, @function
ukl_tcp_sendmsg:
	jmp	sendmsg
	.size	ukl_tcp_sendmsg, . - ukl_tcp_sendmsg
	.globl	ukl_tcp_recv
	.type	ukl_tcp_recv, @function
ukl_tcp_recv:
	jmp	recv
	.size	ukl_tcp_recv, . - ukl_tcp_recv

/* Code built with a kernel's speculation thunks returns and branches plainly. */
	.weak	__x86_return_thunk
__x86_return_thunk:
	ret
	.irp	reg, rax, rbx, rcx, rdx, rsi, rdi, rbp, r8, r9, r10, r11, r12, r13, r14, r15
	.weak	__x86_indirect_thunk_\reg
__x86_indirect_thunk_\reg:
	jmp	*%\reg
	.endr
	.section .note.GNU-stack, "", @progbits
