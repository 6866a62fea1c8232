// SPDX-License-Identifier: GPL-2.0
/* A system call body that changes the caller's return flags or ip without
 * asking for the slow exit: getppid(0x7e57) returns with EFLAGS.ID set,
 * getppid(0x7f57) with TF and IF set, and getppid(0x1a57, ip) to ip. */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched/task_stack.h>

static int set_id(struct kprobe *p, struct pt_regs *regs)
{
	struct pt_regs *caller = task_pt_regs(current);

	if (caller->di == 0x7e57)
		caller->flags |= X86_EFLAGS_ID;
	if (caller->di == 0x7f57)
		caller->flags |= X86_EFLAGS_TF | X86_EFLAGS_IF;
	if (caller->di == 0x1a57)
		caller->ip = caller->si;
	return 0;
}

static struct kprobe probe = {
	.symbol_name = "__x64_sys_getppid",
	.pre_handler = set_id,
};

static int __init setflags_init(void)
{
	return register_kprobe(&probe);
}

static void __exit setflags_exit(void)
{
	unregister_kprobe(&probe);
}

module_init(setflags_init);
module_exit(setflags_exit);
MODULE_LICENSE("GPL");
