// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that attributes every guest instruction of a measured
 * window to a call stack, for `ukl profile`.  Run it at -smp 1: its
 * counters are plain globals.
 *
 * Counting is exact: every instruction adds one to a counter inline, and at
 * each translation block's start the instructions counted since the last
 * one are charged to the block that ran before it (a block cut short by an
 * exception included) under the current stack.
 *
 * Stacks come from a shadow stack kept from the instructions that end
 * blocks: a call pushes a frame (its target, its return address); a block
 * that starts at an entry address the host names (interrupt, exception and
 * system call entries) pushes an entry frame.  After a ret, an iret, a
 * sysret or an indirect jmp, a block that starts at the return address of a
 * frame pops the stack to below it; after an iret, a sysret or a return
 * jump the host names (the UKL ones), with no such frame, the stack pops
 * through the newest entry frame.  Each kernel stack has its own shadow
 * stack: the host names the two instructions of the context switch that
 * save and load a task's stack pointer, and their memory operands (the
 * task's thread.sp) identify the task whose shadow stack is saved and
 * restored.  A task first seen there starts from an empty stack.
 * The program's entry point (the host names it) starts an empty stack, so
 * an exec leaves nothing of the old program.  Stacks deeper than MAX_DEPTH
 * drop their oldest frames.
 *
 * The guest brackets a window with the marker NOPs of bench/switches.c.
 * At the end marker the plugin writes to out=FILE:
 *   window <total instructions>
 *   <count> <pc>;<pc>;...;<leaf block pc>      (hex, outermost first)
 *   end
 * entries=FILE holds lines "entry START END", "return ADDR", "start ADDR" and
 * "switch START END" (hex).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

#include "markers.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_DEPTH 96
#define MAX_RANGES 256

enum last { L_OTHER, L_CALL, L_RET, L_IRET, L_SYSRET, L_JMP_INDIRECT, L_SYSCALL };

struct block {			/* what translation learned about a block */
	uint64_t pc, next;	/* its start, and the address after its last insn */
	uint8_t last;		/* enum last: how it ends */
	uint8_t entry;		/* it starts at an entry */
	uint8_t ret_jump;	/* it ends with a return jump the host named */
	uint8_t start;		/* it is the program's entry point */
};

struct frame {
	uint64_t ret;		/* return address, 0 if unknown */
	uint32_t node;		/* the stack up to and including this frame */
	uint8_t entry;
};

struct stack {
	struct frame f[MAX_DEPTH];
	int depth;
};

/* Stack nodes, interned: node 0 is the root. */
struct node {
	uint32_t parent;
	uint64_t pc;
};

static struct node *nodes;
static uint32_t n_nodes, cap_nodes;
static uint32_t *node_index;	/* open addressing: node ids + 1 */
static uint64_t node_index_cap;

/* Window counts: (node, leaf pc) -> instructions. */
struct count {
	uint32_t node;
	uint64_t pc, n;
};

static struct count *counts;
static uint64_t counts_cap, counts_used;

/* Saved shadow stacks, by the address of a task's thread.sp. */
struct saved {
	uint64_t key;
	struct stack *stack;
};

static struct saved *saved;
static uint64_t saved_cap, saved_used;

static uint64_t entry_lo[MAX_RANGES], entry_hi[MAX_RANGES], returns[MAX_RANGES];
static int n_entries, n_returns;
static uint64_t switch_lo, switch_hi, program_start = 1;

static uint64_t insns, charged;	/* every instruction; those charged so far */
static struct stack cur;
static struct block *prev;	/* the block running now */
static int in_window;
static FILE *out;

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	return h ^ (h >> 29);
}

static void *zalloc(uint64_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p) {
		fprintf(stderr, "profile: out of memory\n");
		exit(1);
	}
	return p;
}

static void rehash_nodes(void)
{
	node_index_cap = node_index_cap ? node_index_cap * 2 : 1 << 16;
	free(node_index);
	node_index = zalloc(node_index_cap, sizeof(*node_index));
	for (uint32_t id = 1; id < n_nodes; id++) {
		uint64_t i = mix(nodes[id].parent, nodes[id].pc) & (node_index_cap - 1);

		while (node_index[i])
			i = (i + 1) & (node_index_cap - 1);
		node_index[i] = id + 1;
	}
}

static uint32_t intern(uint32_t parent, uint64_t pc)
{
	uint64_t i;

	if ((uint64_t)n_nodes * 2 >= node_index_cap)
		rehash_nodes();
	for (i = mix(parent, pc) & (node_index_cap - 1); node_index[i];
	     i = (i + 1) & (node_index_cap - 1)) {
		struct node *n = &nodes[node_index[i] - 1];

		if (n->parent == parent && n->pc == pc)
			return node_index[i] - 1;
	}
	if (n_nodes == cap_nodes) {
		struct node *bigger = zalloc(cap_nodes * 2, sizeof(*nodes));

		memcpy(bigger, nodes, n_nodes * sizeof(*nodes));
		free(nodes);
		nodes = bigger;
		cap_nodes *= 2;
	}
	nodes[n_nodes] = (struct node){ parent, pc };
	node_index[i] = n_nodes + 1;
	return n_nodes++;
}

static void add_count(uint32_t node, uint64_t pc, uint64_t n)
{
	uint64_t i;

	if (counts_used * 2 >= counts_cap) {
		struct count *old = counts;
		uint64_t old_cap = counts_cap;

		counts_cap = counts_cap ? counts_cap * 2 : 1 << 16;
		counts = zalloc(counts_cap, sizeof(*counts));
		counts_used = 0;
		for (uint64_t j = 0; j < old_cap; j++)
			if (old[j].n)
				add_count(old[j].node, old[j].pc, old[j].n);
		free(old);
	}
	for (i = mix(node, pc) & (counts_cap - 1); counts[i].n; i = (i + 1) & (counts_cap - 1))
		if (counts[i].node == node && counts[i].pc == pc) {
			counts[i].n += n;
			return;
		}
	counts[i] = (struct count){ node, pc, n };
	counts_used++;
}

static uint32_t top_node(void)
{
	return cur.depth ? cur.f[cur.depth - 1].node : 0;
}

static void push(uint64_t pc, uint64_t ret, int entry)
{
	if (cur.depth == MAX_DEPTH) {	/* drop the oldest frame */
		memmove(cur.f, cur.f + 1, (MAX_DEPTH - 1) * sizeof(cur.f[0]));
		cur.depth--;
	}
	cur.f[cur.depth] = (struct frame){ ret, intern(top_node(), pc), entry };
	cur.depth++;
}

/* Pop to below the newest frame returning to PC; false if there is none. */
static int pop_to(uint64_t pc)
{
	for (int d = cur.depth - 1; d >= 0; d--)
		if (cur.f[d].ret == pc) {
			cur.depth = d;
			return 1;
		}
	return 0;
}

static void pop_entry(void)
{
	while (cur.depth && !cur.f[--cur.depth].entry)
		;
}

/* Charge what ran since the last charge to the running block. */
static void charge(void)
{
	if (in_window && prev && insns > charged)
		add_count(top_node(), prev->pc, insns - charged);
	charged = insns;
}

static void on_block(unsigned int vcpu, void *udata)
{
	struct block *b = udata;

	charge();
	if (b->start) {
		cur.depth = 0;
	} else if (b->entry) {			/* whatever the last block did, it did not finish */
		if (prev && prev->last == L_SYSCALL)
			push(b->pc, prev->next, 1);
		else
			push(b->pc, prev && prev->last == L_OTHER ? prev->next : 0, 1);
	} else if (prev) {
		switch (prev->last) {
		case L_CALL:
			push(b->pc, prev->next, 0);
			break;
		case L_RET:
		case L_JMP_INDIRECT:
			if (!pop_to(b->pc) && prev->ret_jump)
				pop_entry();
			break;
		case L_IRET:
		case L_SYSRET:
			if (!pop_to(b->pc))
				pop_entry();
			break;
		}
	}
	prev = b;
}

static struct stack *find_saved(uint64_t key, int create)
{
	uint64_t i;

	if (create && saved_used * 2 >= saved_cap) {
		struct saved *old = saved;
		uint64_t old_cap = saved_cap;

		saved_cap = saved_cap ? saved_cap * 2 : 1024;
		saved = zalloc(saved_cap, sizeof(*saved));
		saved_used = 0;
		for (uint64_t j = 0; j < old_cap; j++)
			if (old[j].stack) {
				*find_saved(old[j].key, 1) = *old[j].stack;
				free(old[j].stack);
			}
		free(old);
	}
	if (!saved_cap)
		return NULL;
	for (i = mix(key, 0) & (saved_cap - 1); saved[i].stack; i = (i + 1) & (saved_cap - 1))
		if (saved[i].key == key)
			return saved[i].stack;
	if (!create)
		return NULL;
	saved[i].key = key;
	saved[i].stack = zalloc(1, sizeof(struct stack));
	saved_used++;
	return saved[i].stack;
}

/* The context switch stores the old task's sp and loads the new one's. */
static void on_switch(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
		      void *udata)
{
	struct stack *s;

	charge();
	if (qemu_plugin_mem_is_store(info)) {
		*find_saved(vaddr, 1) = cur;
		return;
	}
	s = find_saved(vaddr, 0);
	if (s)
		cur = *s;
	else
		cur.depth = 0;
}

static int cmp_count(const void *a, const void *b)
{
	const struct count *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

static void write_stack(uint32_t node)
{
	if (!node)
		return;
	write_stack(nodes[node].parent);
	fprintf(out, "%" PRIx64 ";", nodes[node].pc);
}

static void on_marker(unsigned int vcpu, void *which)
{
	uint64_t total = 0, n = 0;
	struct count *list;

	charge();
	if ((uintptr_t)which == MARK_BEGIN) {
		memset(counts, 0, counts_cap * sizeof(*counts));
		counts_used = 0;
		in_window = 1;
		return;
	}
	if (!in_window)
		return;
	in_window = 0;
	list = zalloc(counts_used + 1, sizeof(*list));
	for (uint64_t i = 0; i < counts_cap; i++)
		if (counts[i].n) {
			list[n++] = counts[i];
			total += counts[i].n;
		}
	qsort(list, n, sizeof(*list), cmp_count);
	fprintf(out, "window %" PRIu64 "\n", total);
	for (uint64_t i = 0; i < n; i++) {
		fprintf(out, "%" PRIu64 " ", list[i].n);
		write_stack(list[i].node);
		fprintf(out, "%" PRIx64 "\n", list[i].pc);
	}
	fputs("end\n", out);
	fflush(out);
	free(list);
}

static int is_prefix(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
	       b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
}

/* How an instruction transfers control, from its bytes. */
static int kind(const uint8_t *p, size_t n)
{
	size_t i = 0;
	int reg;

	while (i < n && is_prefix(p[i]))
		i++;
	if (i < n && (p[i] & 0xf0) == 0x40)		/* REX */
		i++;
	if (i >= n)
		return L_OTHER;
	switch (p[i]) {
	case 0xe8: return L_CALL;
	case 0xc3: case 0xc2: return L_RET;
	case 0xcf: return L_IRET;
	case 0xff:
		reg = i + 1 < n ? (p[i + 1] >> 3) & 7 : -1;
		return reg == 2 ? L_CALL : reg == 4 ? L_JMP_INDIRECT : L_OTHER;
	case 0x0f:
		if (i + 1 < n && p[i + 1] == 0x05)
			return L_SYSCALL;
		if (i + 1 < n && (p[i + 1] == 0x07 || p[i + 1] == 0x35))
			return L_SYSRET;			/* SYSRET, SYSEXIT */
	}
	return L_OTHER;
}

/* mov %rsp, disp(%rdi) or mov disp(%rsi), %rsp: a task's saved stack pointer. */
static int moves_task_sp(const uint8_t *p, size_t n)
{
	return n >= 3 && p[0] == 0x48 && (p[1] == 0x89 || p[1] == 0x8b) &&
	       ((p[2] >> 3) & 7) == 4 && (p[2] >> 6) != 3;
}

static int in_ranges(uint64_t pc, const uint64_t *lo, const uint64_t *hi, int n)
{
	for (int i = 0; i < n; i++)
		if (pc >= lo[i] && pc < hi[i])
			return 1;
	return 0;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t count = qemu_plugin_tb_n_insns(tb);
	struct block *b = zalloc(1, sizeof(*b));	/* lives as long as QEMU may run it */

	b->pc = qemu_plugin_tb_vaddr(tb);
	b->entry = in_ranges(b->pc, entry_lo, entry_hi, n_entries);
	b->start = b->pc == program_start;
	for (size_t i = 0; i < count; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *p = qemu_plugin_insn_data(insn);
		size_t n = qemu_plugin_insn_size(insn);
		uint64_t pc = qemu_plugin_insn_vaddr(insn);
		uint32_t mark = marker(p, n);

		qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
							   &insns, 1);
		if (mark)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)mark);
		if (pc >= switch_lo && pc < switch_hi && moves_task_sp(p, n))
			qemu_plugin_register_vcpu_mem_cb(insn, on_switch, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, NULL);
		if (i == count - 1) {
			b->next = pc + n;
			b->last = kind(p, n);
			for (int r = 0; r < n_returns; r++)
				b->ret_jump |= returns[r] == pc;
		}
	}
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, b);
}

static int read_entries(const char *path)
{
	FILE *f = fopen(path, "r");
	char what[16];
	uint64_t a, b;

	if (!f)
		return -1;
	while (fscanf(f, "%15s %" SCNx64, what, &a) == 2) {
		if (!strcmp(what, "return")) {
			if (n_returns < MAX_RANGES)
				returns[n_returns++] = a;
			continue;
		}
		if (!strcmp(what, "start")) {
			program_start = a;
			continue;
		}
		if (fscanf(f, "%" SCNx64, &b) != 1)
			break;
		if (!strcmp(what, "switch")) {
			switch_lo = a;
			switch_hi = b;
		} else if (n_entries < MAX_RANGES) {
			entry_lo[n_entries] = a;
			entry_hi[n_entries++] = b;
		}
	}
	fclose(f);
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			out = fopen(argv[i] + 4, "w");
		else if (!strncmp(argv[i], "entries=", 8) && read_entries(argv[i] + 8))
			return -1;
	}
	if (!out) {
		fprintf(stderr, "profile: expected out=FILE [entries=FILE]\n");
		return -1;
	}
	cap_nodes = 1 << 16;
	nodes = zalloc(cap_nodes, sizeof(*nodes));
	n_nodes = 1;				/* the root */
	rehash_nodes();
	counts_cap = 1 << 16;
	counts = zalloc(counts_cap, sizeof(*counts));
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
