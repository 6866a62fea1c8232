/*
 * Where this program's returns go.  Built for a kernel with return thunks
 * (UKL_KERNEL=ukl-mitigated), every return jumps to __x86_return_thunk,
 * which ukl links to the kernel's __ukl_return_thunk: one instruction that
 * the kernel patched at boot for this CPU.  This prints it, read from
 * kernel text at CPL0: "ret", or the address of the thunk it jumps to.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern const unsigned char __x86_return_thunk[];

int main(void)
{
	const unsigned char *insn = __x86_return_thunk;
	int32_t rel;

	if (insn[0] == 0xc3) {
		puts("return thunk: ret");
		return 0;
	}
	if (insn[0] == 0xe9) {
		memcpy(&rel, insn + 1, sizeof(rel));
		printf("return thunk: jmp %#lx\n", (unsigned long)(insn + 5 + rel));
		return 0;
	}
	printf("return thunk: unknown instruction %#x\n", insn[0]);
	return 1;
}
