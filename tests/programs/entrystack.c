/*
 * What the UKL entry stack keeps.  It is an IST stack in the cpu_entry_area,
 * which page table isolation maps into every process's user page tables, so
 * on a CPU with Meltdown any process can read what is left on it.
 *
 * At CPL0 this program finds the stack's top (IST 6 of its CPU's TSS), then:
 *  - while an ordinary process (ukl-intruder spin, uid 1000) reads
 *    /dev/zero, it looks at the stack's top after each of its own wakeups
 *    for an interrupt frame of kernel code (CS 0x10, an ip in the kernel's
 *    half), the trace that process's kernel-mode interrupts would leave;
 *  - it spins with a marker in r12 while timer interrupts arrive, then
 *    counts the marker's copies in the stack's top page.
 * Both counts are 0 when nothing is left there.  Run on one CPU, so that
 * the ordinary process shares this program's CPU, and its stack.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MARKER 0x6d61726b65723132UL

struct __attribute__((packed)) dtr {
	unsigned short limit;
	unsigned long base;
};

/* IST 6 of this CPU's 64-bit TSS, whose descriptor the task register selects. */
static unsigned long *ukl_stack_top(void)
{
	const unsigned char *desc;
	unsigned long tss;
	unsigned short tr;
	struct dtr gdt;

	__asm__ volatile("sgdt %0" : "=m"(gdt));
	__asm__ volatile("str %0" : "=r"(tr));
	desc = (const unsigned char *)gdt.base + (tr & ~7);
	tss = desc[2] | (unsigned long)desc[3] << 8 | (unsigned long)desc[4] << 16 |
	      (unsigned long)desc[7] << 24 | (unsigned long)*(const unsigned int *)(desc + 8) << 32;
	/* reserved (4 bytes), sp0-sp2, reserved (8 bytes), then ist[0..6] */
	return *(unsigned long **)(tss + 4 + 3 * 8 + 8 + 5 * 8);
}

/* A frame of kernel code at the top: ss, sp, flags, cs, ip from the top down. */
static int kernel_frames(unsigned long *top)
{
	char *args[] = { "ukl-intruder", "spin", NULL };
	int frames = 0;
	pid_t child;

	child = fork();
	if (child == 0) {
		execv("/bin/ukl-intruder", args);
		_exit(127);
	}
	while (waitpid(child, NULL, WNOHANG) == 0) {
		struct timespec pause = { 0, 5000000 };
		volatile unsigned long *w = top;

		nanosleep(&pause, NULL);
		frames += w[-4] == 0x10 && w[-5] >= 0xffff800000000000UL;
	}
	return frames;
}

static int register_copies(unsigned long *top)
{
	int copies;

	__asm__ volatile(
		"movq %[marker], %%r12\n\t"
		"movq $100000000, %%rcx\n"
		"1:\tdecq %%rcx\n\t"
		"jnz 1b\n\t"
		"leaq -4096(%[top]), %%rdi\n\t"
		"xorl %[copies], %[copies]\n"
		"2:\tcmpq %%r12, (%%rdi)\n\t"
		"jne 3f\n\t"
		"incl %[copies]\n"
		"3:\taddq $8, %%rdi\n\t"
		"cmpq %[top], %%rdi\n\t"
		"jb 2b"
		: [copies] "=&r"(copies)
		: [marker] "r"(MARKER), [top] "r"(top)
		: "rcx", "rdi", "r12", "cc", "memory");
	return copies;
}

/* Whether page table isolation is on, as /proc/cpuinfo says. */
static int pti(void)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int on = 0;

	while (f && !on && fgets(line, sizeof(line), f))
		on = !strncmp(line, "flags", 5) && strstr(line, " pti");
	if (f)
		fclose(f);
	return on;
}

int main(void)
{
	unsigned long *top = ukl_stack_top();

	printf("page table isolation: %s\n", pti() ? "on" : "off");
	printf("kernel-mode frames on the UKL entry stack: %d\n", kernel_frames(top));
	printf("copies of the program's r12 on it: %d\n", register_copies(top));
	return 0;
}
