/*
 * Starting ordinary programs: posix_spawn and fork+execve of busybox echo,
 * and fork+execve of /bin/cpl (examples/cpl.c built as an ordinary static
 * executable, which the tests put in the guest), which reports the child's
 * privilege level.
 */
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int wait_for(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int fork_exec(char **argv)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execve(argv[0], argv, environ);
		_exit(127);
	}
	return pid < 0 ? -1 : wait_for(pid);
}

int main(void)
{
	char *spawned[] = { "/bin/busybox", "echo", "hello from a spawned child", NULL };
	char *forked[] = { "/bin/busybox", "echo", "hello from a forked and exec'd child", NULL };
	char *cpl[] = { "/bin/cpl", NULL };
	pid_t pid;

	if (posix_spawn(&pid, spawned[0], NULL, NULL, spawned, environ)) {
		printf("posix_spawn failed\n");
		return 1;
	}
	printf("child exited with %d\n", wait_for(pid));
	printf("child exited with %d\n", fork_exec(forked));
	if (access(cpl[0], X_OK))
		printf("no %s in this guest to report a child's privilege level\n", cpl[0]);
	else
		printf("child exited with %d\n", fork_exec(cpl));
	return 0;
}
