/*
 * Co-running: a shell inspects this process with ps, top and /proc while it
 * spins without making system calls.  On one CPU the shell runs only if the
 * timer preempts the spinning code; SIGCHLD then ends the spin.
 */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static volatile sig_atomic_t child_done;

static void on_child(int sig)
{
	child_done = 1;
}

int main(void)
{
	char cmd[256];
	char *argv[] = { "/bin/busybox", "sh", "-c", cmd, NULL };
	unsigned long spins = 0;
	pid_t pid;
	int status;

	snprintf(cmd, sizeof(cmd),
		 "ps -o pid,args | awk '$1 == %d {print \"ps:\", $2}'; "
		 "top -b -n1 | awk '$1 == %d {print \"top:\", $NF}'; "
		 "grep -E '^(Name|State):' /proc/%d/status; "
		 "grep -c stack /proc/%d/maps", getpid(), getpid(), getpid(), getpid());
	signal(SIGCHLD, on_child);
	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ))
		return 1;
	while (!child_done)
		spins++;
	waitpid(pid, &status, 0);
	printf("%s while the shell ran; shell exited with %d\n",
	       spins ? "spun" : "never spun", WEXITSTATUS(status));
	return 0;
}
