/*
 * The registers across a raw SYSCALL, as Linux leaves them: rcx holds the
 * address after the instruction and r11 the flags before it; every other
 * general register, the flags and the vector registers are kept.  Prints
 * "registers kept" and exits 0, or names each register that changed and
 * exits 1.  Built by an ordinary compiler (`ukl run --binary`).
 */
#include <stdio.h>
#include <sys/syscall.h>

static const char *const names[] = {
	"rbx", "rbp", "rdx", "rsi", "rdi", "r8", "r9", "r10",
	"r12", "r13", "r14", "r15", "xmm0", "xmm15",
};
#define NREGS (sizeof(names) / sizeof(names[0]))

unsigned long sr_after[NREGS], sr_rcx, sr_r11, sr_rip, sr_flags_before, sr_flags_after;

int main(void)
{
	int changed = 0;

	asm volatile(
		"push %%rbp\n\t"
		"movq $0x1001, %%rbx\n\t"
		"movq $0x1002, %%rbp\n\t"
		"movq $0x1003, %%rdx\n\t"
		"movq $0x1004, %%rsi\n\t"
		"movq $0x1005, %%rdi\n\t"
		"movq $0x1006, %%r8\n\t"
		"movq $0x1007, %%r9\n\t"
		"movq $0x1008, %%r10\n\t"
		"movq $0x1009, %%r12\n\t"
		"movq $0x100a, %%r13\n\t"
		"movq $0x100b, %%r14\n\t"
		"movq $0x100c, %%r15\n\t"
		"movq $0x100d, %%rax\n\t"
		"movq %%rax, %%xmm0\n\t"
		"movq $0x100e, %%rax\n\t"
		"movq %%rax, %%xmm15\n\t"
		"leaq 1f(%%rip), %%rax\n\t"
		"movq %%rax, sr_rip(%%rip)\n\t"
		"movl %[nr], %%eax\n\t"
		"stc\n\t"			/* CF and PF set, ZF clear */
		"pushfq\n\t"
		"popq sr_flags_before(%%rip)\n\t"
		"syscall\n"
		"1:\n\t"
		"pushfq\n\t"
		"popq sr_flags_after(%%rip)\n\t"
		"movq %%rcx, sr_rcx(%%rip)\n\t"
		"movq %%r11, sr_r11(%%rip)\n\t"
		"movq %%rbx, sr_after+0(%%rip)\n\t"
		"movq %%rbp, sr_after+8(%%rip)\n\t"
		"movq %%rdx, sr_after+16(%%rip)\n\t"
		"movq %%rsi, sr_after+24(%%rip)\n\t"
		"movq %%rdi, sr_after+32(%%rip)\n\t"
		"movq %%r8, sr_after+40(%%rip)\n\t"
		"movq %%r9, sr_after+48(%%rip)\n\t"
		"movq %%r10, sr_after+56(%%rip)\n\t"
		"movq %%r12, sr_after+64(%%rip)\n\t"
		"movq %%r13, sr_after+72(%%rip)\n\t"
		"movq %%r14, sr_after+80(%%rip)\n\t"
		"movq %%r15, sr_after+88(%%rip)\n\t"
		"movq %%xmm0, sr_after+96(%%rip)\n\t"
		"movq %%xmm15, sr_after+104(%%rip)\n\t"
		"pop %%rbp\n\t"
		: : [nr] "i"(SYS_getppid)
		: "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
		  "r12", "r13", "r14", "r15", "xmm0", "xmm15", "memory", "cc");

	for (unsigned int i = 0; i < NREGS; i++) {
		if (sr_after[i] != 0x1001 + i) {
			printf("%s changed: %#lx\n", names[i], sr_after[i]);
			changed = 1;
		}
	}
	if (sr_rcx != sr_rip) {
		printf("rcx is %#lx, not the address after SYSCALL %#lx\n", sr_rcx, sr_rip);
		changed = 1;
	}
	if (sr_r11 != sr_flags_before) {
		printf("r11 is %#lx, not the flags before SYSCALL %#lx\n", sr_r11, sr_flags_before);
		changed = 1;
	}
	if (sr_flags_after != sr_flags_before) {
		printf("flags changed: %#lx, were %#lx\n", sr_flags_after, sr_flags_before);
		changed = 1;
	}
	if (!changed)
		printf("registers kept\n");
	return changed;
}
