/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The marker NOPs with which the guest brackets a measured window for the
 * QEMU plugins: "nopl 0x554b4c01(%rax)" begins it, "nopl 0x554b4c02(%rax)"
 * ends it (bench/lebench.c, bench/busy.c).  Anywhere else they are NOPs.
 */
#include <stdint.h>
#include <string.h>

#define MARK_BEGIN 0x554b4c01u
#define MARK_END 0x554b4c02u

/* MARK_BEGIN or MARK_END if the instruction's bytes are a marker, else 0. */
static inline uint32_t marker(const uint8_t *p, size_t n)
{
	uint32_t disp;

	if (n != 7 || p[0] != 0x0f || p[1] != 0x1f || p[2] != 0x80)
		return 0;
	memcpy(&disp, p + 3, 4);
	return disp == MARK_BEGIN || disp == MARK_END ? disp : 0;
}
