/*
 * A tracer restarts a system call as Linux's ptrace_syscall selftest and
 * user-space checkpointers do: at the exit stop it moves ip back over the
 * 2-byte SYSCALL and puts the number back in ax.  The call then runs again.
 */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static int stop(pid_t child)
{
	int status;

	if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status))
		return -1;
	return WSTOPSIG(status);
}

/* Run the child to its next system-call stop; the call's number there. */
static long next_call(pid_t child)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_SYSCALL, child, 0, 0) || stop(child) != (SIGTRAP | 0x80) ||
	    ptrace(PTRACE_GETREGS, child, 0, &regs))
		return -1;
	return regs.orig_rax;
}

int main(void)
{
	struct user_regs_struct regs;
	int status, runs = 0;
	long nr;
	pid_t child = fork();

	if (child == 0) {
		pid_t parent = getppid();

		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(syscall(SYS_getppid) == parent ? 0 : 1);
	}
	if (stop(child) != SIGSTOP || ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACESYSGOOD))
		return perror("tracing"), 1;
	while ((nr = next_call(child)) >= 0 && nr != SYS_getppid)
		next_call(child);			/* the exit stop of another call */
	if (nr != SYS_getppid || next_call(child) != SYS_getppid ||
	    ptrace(PTRACE_GETREGS, child, 0, &regs))
		return puts("no getppid() stops"), 1;
	regs.rip -= 2;
	regs.rax = regs.orig_rax;
	if (ptrace(PTRACE_SETREGS, child, 0, &regs))
		return perror("PTRACE_SETREGS"), 1;
	while (next_call(child) == SYS_getppid)
		runs++;
	ptrace(PTRACE_CONT, child, 0, 0);	/* from the exit_group() stop */
	waitpid(child, &status, 0);
	printf("getppid() restarted by the tracer: %d more stops; the child %s\n", runs,
	       WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "exited normally" :
	       WIFSIGNALED(status) ? "was killed by a signal" : "failed");
	return 0;
}
