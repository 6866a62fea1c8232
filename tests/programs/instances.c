/*
 * Two instances of one program at once: the first run starts two more of
 * itself (fork + exec of its own file), each of which sets its globals to
 * its own number and checks, while the other runs, that they keep it.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int instance;
static char name[32] = "unset";

static int worker(int n)
{
	char expected[sizeof(name)];

	instance = n;
	snprintf(name, sizeof(name), "instance %d", n);
	snprintf(expected, sizeof(expected), "instance %d", n);
	for (int i = 0; i < 20000; i++) {
		if (instance != n || strcmp(name, expected))
			return 1;
		if (i % 100 == 0)
			sched_yield();
	}
	printf("%s: globals kept\n", name);
	return 0;
}

int main(int argc, char **argv)
{
	pid_t pids[2];
	int failed = 0;

	if (argc == 2)
		return worker(atoi(argv[1]));
	fflush(stdout);
	for (int i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			char arg[2] = { '1' + i, 0 };

			execl("/proc/self/exe", argv[0], arg, (char *)NULL);
			perror("exec");
			_exit(127);
		}
	}
	for (int i = 0; i < 2; i++) {
		int status;

		waitpid(pids[i], &status, 0);
		failed += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	printf("two instances ran at once; %d failed\n", failed);
	return failed;
}
