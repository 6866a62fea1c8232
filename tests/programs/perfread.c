/*
 * Who may sample a UKL program's registers with perf.  The program keeps a
 * secret in r12 while an ordinary process (ukl-intruder, at CPL3), a uid of
 * its own whose only capability is CAP_PERFMON, samples it.  On Linux
 * CAP_PERFMON may read any process's samples, and finds the secret; a UKL
 * program's registers are kernel code's, and reading them takes what
 * reading its memory takes (CAP_SYS_ADMIN), so perf_event_open() fails.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define SECRET "0x5ec7e75ec7e75ec7"

int main(void)
{
	register unsigned long secret __asm__("r12") = 0x5ec7e75ec7e75ec7UL;
	char pid[16];
	char *args[] = { "ukl-intruder", "perf", pid, SECRET, NULL };
	pid_t child;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	fflush(stdout);
	child = fork();
	if (child == 0) {
		execv("/bin/ukl-intruder", args);
		perror("exec ukl-intruder");
		_exit(127);
	}
	/* Spin with the secret in r12 until the intruder has finished. */
	while (waitpid(child, NULL, WNOHANG) == 0)
		for (int i = 0; i < 100000; i++)
			__asm__ volatile("" : "+r"(secret));
	return 0;
}
