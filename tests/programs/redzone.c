/*
 * The 128 bytes below the stack pointer (the red zone) across raw
 * SYSCALLs, timer interrupts and page faults: code that is not a function
 * call's callee keeps data there, and nothing may write it.  Fills the red
 * zone, then makes getppid() 20000 times, touching a new page before each
 * call, and checks every byte.  Prints "red zone kept" and exits 0, or the
 * number of words changed and exits 1.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define CALLS 20000

int main(void)
{
	char *pages = mmap(NULL, CALLS * 4096UL, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long changed;

	if (pages == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	asm volatile(
		"movq %%rsp, %%r10\n\t"
		"subq $128, %%r10\n\t"
		"xorl %%r8d, %%r8d\n"
		"1:\n\t"
		"leaq 0x5a5a00(%%r8), %%rax\n\t"
		"movq %%rax, (%%r10,%%r8,8)\n\t"
		"incl %%r8d\n\t"
		"cmpl $16, %%r8d\n\t"
		"jb 1b\n\t"
		"movl %[calls], %%r9d\n"
		"2:\n\t"
		"movb $1, (%[pages])\n\t"
		"addq $4096, %[pages]\n\t"
		"movl %[nr], %%eax\n\t"
		"syscall\n\t"
		"decl %%r9d\n\t"
		"jnz 2b\n\t"
		"xorl %%r8d, %%r8d\n\t"
		"xorl %k[changed], %k[changed]\n"
		"3:\n\t"
		"leaq 0x5a5a00(%%r8), %%rax\n\t"
		"cmpq %%rax, (%%r10,%%r8,8)\n\t"
		"je 4f\n\t"
		"incl %k[changed]\n"
		"4:\n\t"
		"incl %%r8d\n\t"
		"cmpl $16, %%r8d\n\t"
		"jb 3b\n\t"
		: [changed] "=&r"(changed), [pages] "+r"(pages)
		: [nr] "i"(SYS_getppid), [calls] "i"(CALLS)
		: "rax", "rcx", "r8", "r9", "r10", "r11", "memory", "cc");
	if (changed) {
		printf("%lu of the red zone's 16 words changed\n", changed);
		return 1;
	}
	printf("red zone kept\n");
	return 0;
}
