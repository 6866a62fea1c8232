/*
 * Signals: SA_SIGINFO handlers, raise, kill to self, masks, SIGALRM from
 * setitimer interrupting a busy loop, a handler on a sigaltstack, and a
 * SIGSEGV handler that siglongjmps out.  Handlers return via rt_sigreturn.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t usr1_code, alarms, on_altstack;
static sigjmp_buf segv_jump;
static char altstack[64 * 1024];

static void on_usr1(int sig, siginfo_t *info, void *ctx)
{
	usr1_code = info->si_code;
}

static void on_alarm(int sig)
{
	alarms++;
}

static void on_usr2(int sig)
{
	char here;

	on_altstack = &here >= altstack && &here < altstack + sizeof(altstack);
}

static void on_segv(int sig)
{
	siglongjmp(segv_jump, 1);
}

static void handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
}

int main(void)
{
	struct sigaction sa;
	sigset_t block, pending;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	printf("raise: SA_SIGINFO handler ran, si_code %s\n",
	       usr1_code == SI_TKILL ? "SI_TKILL" : "unexpected");
	usr1_code = 0;
	kill(getpid(), SIGUSR1);
	printf("kill to self: si_code %s\n", usr1_code == SI_USER ? "SI_USER" : "unexpected");

	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	usr1_code = -1;
	raise(SIGUSR1);
	sigpending(&pending);
	printf("blocked: pending %d, handler ran %d\n", sigismember(&pending, SIGUSR1),
	       usr1_code != -1);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	printf("unblocked: handler ran %d\n", usr1_code != -1);

	handle(SIGALRM, on_alarm, 0);
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	for (volatile unsigned long spin = 0; alarms < 3; spin++)
		;
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	/* a fourth may land before the timer stops, on a loaded host */
	printf("SIGALRM interrupted a busy loop %s 3 times\n", alarms >= 3 ? "at least" : "fewer than");

	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	sigaltstack(&ss, NULL);
	handle(SIGUSR2, on_usr2, SA_ONSTACK);
	raise(SIGUSR2);
	printf("handler on the alternate stack: %s\n", on_altstack ? "yes" : "no");

	handle(SIGSEGV, on_segv, SA_NODEFER);
	if (!sigsetjmp(segv_jump, 1)) {
		int *volatile bad = (int *)8;

		*bad = 1;
		printf("no SIGSEGV\n");
	} else {
		printf("SIGSEGV handler jumped out of the fault\n");
	}
	return 0;
}
