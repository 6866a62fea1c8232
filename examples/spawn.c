/* posix_spawn of an ordinary program; the child runs as a normal process. */
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>

extern char **environ;

int main(void)
{
	char *argv[] = { "/bin/busybox", "echo", "hello from a spawned child", NULL };
	pid_t pid;
	int status;

	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ)) {
		printf("posix_spawn failed\n");
		return 1;
	}
	waitpid(pid, &status, 0);
	printf("child exited with %d\n", WEXITSTATUS(status));
	return 0;
}
