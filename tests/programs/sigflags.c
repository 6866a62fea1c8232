/*
 * Signal handlers that change the interrupted context's flags, as
 * debuggers and self-tracing runtimes do.
 *
 * Setting TF single-steps the program: a SIGTRAP (TRAP_TRACE) after each
 * instruction, with TF still set in the trapped context, through system
 * calls, until a handler clears it.  Clearing AC means nothing to an
 * ordinary process.  A UKL program must behave the same, although it runs
 * at CPL0, where TF traps in the kernel's #DB handler and AC opens the
 * program's own (user) pages to it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define TF (1UL << 8)
#define AC (1UL << 18)

static volatile int traps, other_code, tf_in_context = 1, past_call, stepped_past_call, stop;
static volatile long global;

static void set_tf(int sig, siginfo_t *si, void *uc)
{
	((ucontext_t *)uc)->uc_mcontext.gregs[REG_EFL] |= TF;
}

static void clear_ac(int sig, siginfo_t *si, void *uc)
{
	((ucontext_t *)uc)->uc_mcontext.gregs[REG_EFL] &= ~AC;
}

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	traps++;
	if (si->si_code != TRAP_TRACE)
		other_code++;
	if (!(uc->uc_mcontext.gregs[REG_EFL] & TF))
		tf_in_context = 0;
	if (past_call)
		stepped_past_call = 1;
	if (stop)
		uc->uc_mcontext.gregs[REG_EFL] &= ~TF;
}

static void handle(int sig, void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO;
	sigaction(sig, &sa, NULL);
}

int main(void)
{
	handle(SIGUSR1, set_tf);
	handle(SIGUSR2, clear_ac);
	handle(SIGTRAP, on_trap);

	raise(SIGUSR1);
	getppid();
	past_call = 1;
	global = 1;
	stop = 1;
	global = 2;
	printf("single-stepping: %s; every trap TRAP_TRACE: %s; TF kept in the context: %s; "
	       "stepped through a system call: %s\n", traps > 0 ? "yes" : "no",
	       other_code ? "no" : "yes", tf_in_context ? "yes" : "no",
	       stepped_past_call ? "yes" : "no");

	raise(SIGUSR2);
	global = 3;
	printf("after a handler cleared AC: the program goes on (%ld)\n", global);
	return 0;
}
