/*
 * Executing the program's file from an ordinary process, under a tracer
 * that could not attach to the program itself.
 *
 * First, a tracer with CAP_SYS_PTRACE but not CAP_SYS_ADMIN (ukl-intruder
 * trace) attaches to an ordinary launcher, which then executes this file.
 * On Linux the tracer keeps it, as for any exec that gains no privilege.
 * Under UKL the file is code that runs at CPL0 and only CAP_SYS_ADMIN may
 * control it, so the exec fails, as setuid exec drops its privilege.
 *
 * Then a launcher that kept CAP_SYS_ADMIN across setuid(1000) executes the
 * file with 1 MB of arguments, again and again, while an ordinary uid 1000
 * process (ukl-intruder race) tries to seize each one.  No seize may catch
 * a UKL program, however it lands during the exec.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RACES 30
#define BIG_ARGS 32
#define BIG_ARG (32 * 1024)

static char self[PATH_MAX];

static pid_t launch(const char *how, char **args)
{
	char *argv[BIG_ARGS + 8] = { "ukl-intruder", "exec", (char *)how, self, "exit" };
	pid_t pid;
	int i;

	for (i = 0; args && args[i]; i++)
		argv[5 + i] = args[i];
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execv("/bin/ukl-intruder", argv);
		_exit(127);
	}
	return pid;
}

/* Until PID has executed ukl-intruder: before, it is a fork of this UKL program. */
static void wait_for_launcher(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;
	int tries = 10000;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	while (strcmp(comm, "ukl-intruder\n") && tries--) {
		usleep(1000);
		f = fopen(path, "r");
		if (!f || !fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		if (f)
			fclose(f);
	}
}

static void traced_exec(void)
{
	char pid[16];
	pid_t child, tracer;

	child = launch("traced", NULL);
	wait_for_launcher(child);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	tracer = fork();
	if (tracer == 0) {
		execl("/bin/ukl-intruder", "ukl-intruder", "trace", pid, (char *)NULL);
		_exit(127);
	}
	waitpid(tracer, NULL, 0);
	waitpid(child, NULL, 0);
}

static void race(void)
{
	static char big[BIG_ARGS][BIG_ARG];
	char *args[BIG_ARGS + 1] = { 0 };
	int pipefd[2], i;
	pid_t intruder, child;

	for (i = 0; i < BIG_ARGS; i++) {
		memset(big[i], 'a', BIG_ARG - 1);
		args[i] = big[i];
	}
	if (pipe(pipefd))
		return;
	fflush(stdout);
	intruder = fork();
	if (intruder == 0) {
		dup2(pipefd[0], 0);
		close(pipefd[1]);
		if (setgid(1000) || setuid(1000))
			_exit(1);
		execl("/bin/ukl-intruder", "ukl-intruder", "race", (char *)NULL);
		_exit(127);
	}
	close(pipefd[0]);
	for (i = 0; i < RACES; i++) {
		child = launch("keepcaps", args);
		dprintf(pipefd[1], "%d\n", (int)child);
		waitpid(child, NULL, 0);
	}
	close(pipefd[1]);
	waitpid(intruder, NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exit")) {
		usleep(20000);		/* long enough for a tracer to stop it */
		return 0;
	}
	if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0) {
		perror("/proc/self/exe");
		return 1;
	}
	traced_exec();
	race();
	return 0;
}
