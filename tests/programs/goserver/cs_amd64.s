#include "textflag.h"

// func cs() uint64
TEXT ·cs(SB), NOSPLIT, $0-8
	BYTE $0x8c; BYTE $0xc8	// mov %cs, %eax
	ANDQ $0xffff, AX
	MOVQ AX, ret+0(FP)
	RET
