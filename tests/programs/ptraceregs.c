/*
 * A tracer writes a stopped child's registers.  Writing back what it read
 * must work everywhere.  Under UKL the child's code runs at CPL0, so a
 * change of CS (here to the user code selector that Linux accepts for its
 * own processes) or of EFLAGS.NT or TF is refused with EIO.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define USER_CS 0x33
#define NT (1UL << 14)
#define TF (1UL << 8)

static const char *poke(pid_t pid, size_t offset, unsigned long value)
{
	errno = 0;
	return ptrace(PTRACE_POKEUSER, pid, (void *)offset, (void *)value) ? strerror(errno) : "ok";
}

int main(void)
{
	struct user_regs_struct regs;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(7);
	}
	waitpid(pid, &status, 0);
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs)) {
		perror("PTRACE_GETREGS");
		return 1;
	}
	printf("SETREGS with the values read: %s\n",
	       ptrace(PTRACE_SETREGS, pid, NULL, &regs) ? strerror(errno) : "ok");
	printf("CS %s 0x%x: %s\n", regs.cs == USER_CS ? "kept at" : "changed to", USER_CS,
	       poke(pid, offsetof(struct user_regs_struct, cs), USER_CS));
	printf("EFLAGS.NT set: %s\n",
	       poke(pid, offsetof(struct user_regs_struct, eflags), regs.eflags | NT));
	printf("EFLAGS.TF set: %s\n",
	       poke(pid, offsetof(struct user_regs_struct, eflags), regs.eflags | TF));
	ptrace(PTRACE_SETREGS, pid, NULL, &regs);
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	waitpid(pid, &status, 0);
	printf("child exited with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
