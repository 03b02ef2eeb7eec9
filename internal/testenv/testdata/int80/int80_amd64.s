#include "textflag.h"

// func int80(nr, a1, a2, a3, a4, a5, a6 uintptr) uintptr
//
// The i386 system call entry (INT $0x80) from a 64-bit process: the
// number in AX, the arguments in BX, CX, DX, SI, DI, BP (32 bits each).
// The frame makes the assembler save and restore BP around the body.
TEXT ·int80(SB), NOSPLIT, $8-64
	MOVQ nr+0(FP), AX
	MOVQ a1+8(FP), BX
	MOVQ a2+16(FP), CX
	MOVQ a3+24(FP), DX
	MOVQ a4+32(FP), SI
	MOVQ a5+40(FP), DI
	MOVQ a6+48(FP), BP
	INT $0x80
	MOVQ AX, ret+56(FP)
	RET
