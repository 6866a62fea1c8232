/*
 * Faults taken with interrupts off in a UKL program.
 *
 * UKL code enters the kernel with "cli; call __ukl_syscall", and the call's
 * push may fault: a stack page not yet present.  The kernel recognises that
 * one fault exactly (the bytes, the call's target and the fault address)
 * and handles it as a fault before the cli.
 *
 * Any other fault with interrupts off is what it is: here a store to a
 * fresh page after a cli (which UKL code may not write, so the check of
 * ukl-cc is passed with a call to a local label).  The page is mapped, the
 * store is done once, and the code goes on with interrupts still off,
 * whichever way the kernel returns to it.  The byte before the store is an
 * int3: a kernel that took the fault for the gate's, and went back one
 * byte, would stop the program there with SIGTRAP.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096

static char *fresh_pages(int n)
{
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* getppid() with the stack pointer at the top of an untouched page. */
static long getppid_on_fresh_stack(char *top)
{
	long ret;

	__asm__ volatile("movq %%rsp, %%rbx\n\t"
			 "movq %[top], %%rsp\n\t"
			 "syscall\n\t"
			 "movq %%rbx, %%rsp"
			 : "=a"(ret)
			 : "a"((long)SYS_getppid), [top] "r"(top)
			 : "rbx", "rcx", "r11", "memory");
	return ret;
}

/* Store to PAGE with interrupts off; the flags after it. */
static unsigned long store_with_interrupts_off(char *page)
{
	unsigned long flags;

	__asm__ volatile("cli\n\t"
			 "call 1f\n\t"
			 "jmp 2f\n"
			 "1:\tmovl $0xcc000000, %%eax\n\t"	/* ends in an int3 byte */
			 "movb $42, (%[p])\n\t"
			 "pushfq\n\t"
			 "popq %[f]\n\t"
			 "sti\n\t"
			 "ret\n"
			 "2:"
			 : [f] "=r"(flags)
			 : [p] "r"(page)
			 : "rax", "memory");
	return flags;
}

int main(void)
{
	char *stack = fresh_pages(2), *data = fresh_pages(1);
	unsigned long flags;

	if (!stack || !data) {
		perror("mmap");
		return 1;
	}
	printf("getppid() with its push faulting: %s\n",
	       getppid_on_fresh_stack(stack + 2 * PAGE) == getppid() ? "right" : "WRONG");
	fflush(stdout);
	flags = store_with_interrupts_off(data);
	printf("a store with interrupts off, faulting: %s, interrupts %s after it\n",
	       data[0] == 42 ? "done" : "NOT DONE", flags & 0x200 ? "ON" : "still off");
	return 0;
}
