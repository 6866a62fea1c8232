/*
 * Who may start a UKL program: a child drops to uid 65534 and executes
 * this program's own file again.  Under UKL the image runs as kernel code,
 * so only CAP_SYS_ADMIN may start it and the exec fails with EPERM; on
 * Linux the file is an ordinary executable and runs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int status;
	pid_t pid;

	if (argc == 2) {
		printf("started as uid %d\n", (int)getuid());
		return 0;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534)) {
			perror("setuid");
			_exit(1);
		}
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		printf("exec as uid 65534: %s\n", strerror(errno));
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	printf("as root: this program runs (uid %d)\n", (int)getuid());
	return 0;
}
