/*
 * A return to a non-canonical ip, from a signal handler's address or from
 * a context a handler edited, gives SIGSEGV, as on Linux, where the IRET's
 * fault does.  At CPL0 that IRET would fault in the kernel itself.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define NONCANONICAL 0x8000000000000000UL

static void edit_ip(int sig, siginfo_t *info, void *context)
{
	((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP] = (greg_t)NONCANONICAL;
}

static void try(const char *how, struct sigaction *sa)
{
	int status;
	pid_t child;

	fflush(stdout);
	child = fork();
	if (child == 0) {
		sigaction(SIGUSR1, sa, NULL);
		raise(SIGUSR1);
		_exit(0);
	}
	waitpid(child, &status, 0);
	if (WIFSIGNALED(status))
		printf("%s: killed by %s\n", how, strsignal(WTERMSIG(status)));
	else
		printf("%s: exited with %d\n", how, WEXITSTATUS(status));
}

int main(void)
{
	struct sigaction handler = { .sa_handler = (void (*)(int))NONCANONICAL };
	struct sigaction edited = { .sa_sigaction = edit_ip, .sa_flags = SA_SIGINFO };

	try("a handler at a non-canonical address", &handler);
	try("a handler returning to a non-canonical ip", &edited);
	return 0;
}
