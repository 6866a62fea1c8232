/*
 * A child dies of a general-protection fault (a non-canonical address):
 * the kernel logs an ordinary "traps: ... general protection fault" line,
 * and the parent carries on.  This is not a kernel failure.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		*(volatile int *)0x8000000000000000UL = 1;
		_exit(0);
	}
	waitpid(pid, &status, 0);
	printf("child killed by signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return 0;
}
