/*
 * Where this program's returns go.  Built for a kernel with return thunks
 * (UKL_KERNEL=ukl-mitigated), every return jumps to __x86_return_thunk,
 * which ukl links to the kernel's __ukl_return_thunk: one instruction that
 * the kernel patched at boot for this CPU.  This prints it, read from
 * kernel text at CPL0: "ret", or the address of the thunk it jumps to,
 * after where it is (KASLR moves both).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern const unsigned char __x86_return_thunk[];
/* A kernel address, which the small code model's 32-bit immediates cannot hold. */
static const unsigned char *volatile thunk = __x86_return_thunk;

int main(void)
{
	const unsigned char *insn = thunk;
	int32_t rel;

	printf("return thunk at %p: ", (const void *)insn);
	if (insn[0] == 0xc3) {
		puts("ret");
		return 0;
	}
	if (insn[0] == 0xe9) {
		memcpy(&rel, insn + 1, sizeof(rel));
		printf("jmp %#lx\n", (unsigned long)(insn + 5 + rel));
		return 0;
	}
	printf("unknown instruction %#x\n", insn[0]);
	return 1;
}
