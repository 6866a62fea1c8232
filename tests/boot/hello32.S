# An ordinary 32-bit program, for IA32 emulation: write(1, msg, len) and
# exit(32) by INT $0x80.  Built with `as --32` and `ld -m elf_i386`.
	.section .rodata
msg:	.ascii "hello from a 32-bit process\n"
	.set len, . - msg

	.text
	.globl _start
_start:
	movl	$4, %eax
	movl	$1, %ebx
	movl	$msg, %ecx
	movl	$len, %edx
	int	$0x80
	movl	$1, %eax
	movl	$32, %ebx
	int	$0x80

	.section .note.GNU-stack, "", @progbits
