// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the instructions a mode switch is made of:
 * SYSCALL, SYSRET, IRET, SWAPGS, writes to CR3, WRMSR, POPF and the other
 * serialising instructions.  Under -icount each counts as one instruction,
 * which hides what they cost on hardware; `ukl bench` weighs them.
 *
 * The guest brackets each measurement with two marker NOPs,
 * "nopl 0x554b4c01(%rax)" and "nopl 0x554b4c02(%rax)"; at the second the
 * plugin appends the counts since the first to out=FILE as a JSON line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <qemu-plugin.h>

#include "markers.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

enum { SYSCALL, SYSRET, IRET, SWAPGS, CR3_WRITE, WRMSR, POPF, SERIALISING, NCLASS };
static const char *const names[NCLASS] = {
	"syscall", "sysret", "iret", "swapgs", "cr3_write", "wrmsr", "popf", "serialising",
};


static uint64_t counts[NCLASS], at_begin[NCLASS];
static FILE *out;

static int is_prefix(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
	       b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
}

/* The class of an instruction, from its bytes; -1 for everything else. */
static int classify(const uint8_t *p, size_t n)
{
	size_t i = 0;
	int reg, mem;

	while (i < n && is_prefix(p[i]))
		i++;
	if (i < n && (p[i] & 0xf0) == 0x40)		/* REX */
		i++;
	if (i >= n)
		return -1;
	if (p[i] == 0xcf)
		return IRET;
	if (p[i] == 0x9d)
		return POPF;
	if (p[i] != 0x0f || i + 1 >= n)
		return -1;
	reg = i + 2 < n ? (p[i + 2] >> 3) & 7 : -1;
	mem = i + 2 < n && (p[i + 2] >> 6) != 3;
	switch (p[i + 1]) {
	case 0x05: return SYSCALL;
	case 0x07: return SYSRET;
	case 0x30: return WRMSR;
	case 0x22: return reg == 3 ? CR3_WRITE : SERIALISING;	/* MOV to CRn */
	case 0x23:						/* MOV to DRn */
	case 0xa2:						/* CPUID */
	case 0x08:						/* INVD */
	case 0x09: return SERIALISING;				/* WBINVD */
	case 0x00: return reg == 2 || reg == 3 ? SERIALISING : -1;	/* LLDT, LTR */
	case 0x01:
		if (i + 2 < n && p[i + 2] == 0xf8)
			return SWAPGS;
		if (i + 2 < n && p[i + 2] == 0xe8)
			return SERIALISING;			/* SERIALIZE */
		if (mem && (reg == 2 || reg == 3 || reg == 7))
			return SERIALISING;			/* LGDT, LIDT, INVLPG */
	}
	return -1;
}

static void on_marker(unsigned int vcpu, void *which)
{
	if ((uintptr_t)which == MARK_BEGIN) {
		memcpy(at_begin, counts, sizeof(counts));
		return;
	}
	fputc('{', out);
	for (int c = 0; c < NCLASS; c++)
		fprintf(out, "%s\"%s\": %" PRIu64, c ? ", " : "", names[c], counts[c] - at_begin[c]);
	fputs("}\n", out);
	fflush(out);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	for (size_t i = 0; i < qemu_plugin_tb_n_insns(tb); i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *p = qemu_plugin_insn_data(insn);
		size_t n = qemu_plugin_insn_size(insn);
		uint32_t mark = marker(p, n);
		int c = classify(p, n);

		if (mark)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)mark);
		else if (c >= 0)
			qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
								   &counts[c], 1);
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	if (argc != 1 || strncmp(argv[0], "out=", 4) || !(out = fopen(argv[0] + 4, "w"))) {
		fprintf(stderr, "switches: expected out=FILE\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
