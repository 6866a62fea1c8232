/*
 * How epoll_wait() waits, seen from the program: what UKL_WAIT (waiting in
 * place) must keep of Linux, and the one thing it changes, the sleeps.
 *
 *   timeout  timeouts end no earlier than asked, and at most a tick late
 *   signal   a signal ends an endless wait with EINTR
 *   pipe     a child on the other CPU writes a pipe 20 times; the waiter
 *            says how often it was woken and how often it slept
 *   state    the waiter's state in /proc, read from the other CPU: R if
 *            ever so from 5 to 45 ms into an endless wait, and at 145 ms
 *   fair     a CPU-bound child shares the waiter's only CPU: its share
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS 4		/* CONFIG_HZ=250 */

static long long now_us(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* An epoll instance watching the read end of a new pipe. */
static int epoll_on_pipe(int fds[2])
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(0);

	if (ep < 0 || pipe(fds) || epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev)) {
		perror("epoll");
		exit(1);
	}
	return ep;
}

static void timeouts(void)
{
	static const int ms[] = { 1, 10, 50, 200 };
	struct epoll_event ev;
	int fds[2], ep = epoll_on_pipe(fds);

	for (unsigned i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		long long t0 = now_us(CLOCK_MONOTONIC), took;
		int n = epoll_wait(ep, &ev, 1, ms[i]);

		took = now_us(CLOCK_MONOTONIC) - t0;
		if (n != 0)
			printf("timeout %d ms: returned %d\n", ms[i], n);
		else if (took < ms[i] * 1000LL)
			printf("timeout %d ms: early, after %lld us\n", ms[i], took);
		else if (took > (ms[i] + TICK_MS + 1) * 1000LL)
			printf("timeout %d ms: late, after %lld us\n", ms[i], took);
		else
			printf("timeout %d ms: on time\n", ms[i]);
	}
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void signal_ends_wait(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { .tv_usec = 20000 } };
	struct epoll_event ev;
	int fds[2], ep = epoll_on_pipe(fds), n;

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	n = epoll_wait(ep, &ev, 1, -1);
	printf("endless wait: %s\n", n < 0 && errno == EINTR ? "EINTR after a signal" :
	       "no EINTR");
}

/* One word the two processes share, to take turns without the kernel. */
static volatile int *shared_word(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static void spin_us(long long us)
{
	long long end = now_us(CLOCK_MONOTONIC) + us;

	while (now_us(CLOCK_MONOTONIC) < end)
		;
}

#define ROUNDS 20

static void pipe_from_other_cpu(void)
{
	volatile int *turn = shared_word();
	struct epoll_event ev;
	int fds[2], ep = epoll_on_pipe(fds), woken = 0;
	struct rusage r0, r1;
	char c;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		pin(1);
		*turn = -1;
		for (int i = 0; i < ROUNDS; i++) {
			while (*turn != 2 * i + 1)
				;
			spin_us(200);		/* the waiter is waiting by now */
			write(fds[1], "x", 1);
		}
		_exit(0);
	}
	pin(0);
	while (!*turn)		/* the waiter's CPU is its own */
		;
	getrusage(RUSAGE_SELF, &r0);
	for (int i = 0; i < ROUNDS; i++) {
		*turn = 2 * i + 1;
		if (epoll_wait(ep, &ev, 1, -1) == 1 && read(fds[0], &c, 1) == 1)
			woken++;
	}
	getrusage(RUSAGE_SELF, &r1);
	waitpid(pid, NULL, 0);
	printf("pipe from the other CPU: woken %d of %d\n", woken, ROUNDS);
	printf("sleeps: %ld\n", r1.ru_nvcsw - r0.ru_nvcsw);
}

static char proc_state(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		return '?';
	fclose(f);
	p = strrchr(buf, ')');
	return p ? p[2] : '?';
}

static void state(void)
{
	volatile int *seen = shared_word();
	struct epoll_event ev;
	int fds[2], ep = epoll_on_pipe(fds);
	pid_t waiter = getpid(), pid;

	pid = fork();
	if (pid == 0) {
		pin(1);
		seen[2] = 1;
		while (!seen[3])
			;
		spin_us(5000);
		seen[0] = 'S';
		for (int i = 0; i < 40; i++, spin_us(1000))
			if (proc_state(waiter) == 'R')
				seen[0] = 'R';
		usleep(100000);
		seen[1] = proc_state(waiter);
		write(fds[1], "x", 1);
		_exit(0);
	}
	pin(0);
	while (!seen[2])	/* the waiter's CPU is its own */
		;
	seen[3] = 1;
	epoll_wait(ep, &ev, 1, -1);
	waitpid(pid, NULL, 0);
	printf("waiting: %c from 5 to 45 ms, %c after 145 ms\n", seen[0], seen[1]);
}

static void fair(void)
{
	volatile int *cpu_us = shared_word();
	struct epoll_event ev;
	int fds[2], ep = epoll_on_pipe(fds);
	pid_t pid;

	pin(0);
	pid = fork();
	if (pid == 0) {
		long long end = now_us(CLOCK_MONOTONIC) + 300000;

		while (now_us(CLOCK_MONOTONIC) < end)
			*cpu_us = now_us(CLOCK_PROCESS_CPUTIME_ID);
		_exit(0);
	}
	for (int i = 0; i < 3; i++)
		epoll_wait(ep, &ev, 1, 100);
	waitpid(pid, NULL, 0);
	printf("a CPU-bound process beside the waiter: %s of the CPU\n",
	       *cpu_us >= 270000 ? "at least 90%" : "less than 90%");
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(what, "timeout"))
		timeouts();
	else if (!strcmp(what, "signal"))
		signal_ends_wait();
	else if (!strcmp(what, "pipe"))
		pipe_from_other_cpu();
	else if (!strcmp(what, "state"))
		state();
	else if (!strcmp(what, "fair"))
		fair();
	else {
		fprintf(stderr, "usage: waitplace timeout|signal|pipe|state|fair\n");
		return 2;
	}
	return 0;
}
