/*
 * Signals sent, one at a time, to a thread that does nothing but make
 * system calls.  Wherever a signal lands, the handler sees the interrupted
 * program address: it must never be kernel code, i.e. the kernel's entry
 * code must not be interruptible on the program's behalf (a cancellation
 * landing there would be lost: it lies outside musl's [__cp_begin,
 * __cp_end)).  The one kernel text that runs as the program's own code is
 * a kernel's speculation thunks, which a program built for a kernel with
 * retpolines calls: the addresses landed at are printed, for the test to
 * name.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define SIGNALS 1000

static volatile int stop;
static volatile unsigned long delivered, in_kernel;
static unsigned long kernel_ips[16];

static void handler(int sig, siginfo_t *si, void *ctx)
{
	unsigned long ip = ((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];

	if (ip >= 0x800000000000UL && in_kernel < 16)
		kernel_ips[in_kernel] = ip;
	in_kernel += ip >= 0x800000000000UL;
	delivered++;
}

static void *calls(void *arg)
{
	int fd = open("/dev/null", O_WRONLY);

	while (!stop) {
		syscall(SYS_getppid);
		write(fd, "", 0);		/* a cancellation point */
	}
	close(fd);
	return arg;
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = handler, .sa_flags = SA_SIGINFO | SA_RESTART };
	pthread_t t;

	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&t, NULL, calls, NULL);
	for (int i = 0; i < SIGNALS; i++) {
		unsigned long before = delivered;

		pthread_kill(t, SIGUSR1);
		while (delivered == before)
			sched_yield();
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("%lu signals delivered to a thread making system calls; "
	       "%lu interrupted kernel code\n", delivered, in_kernel);
	for (unsigned long i = 0; i < in_kernel && i < 16; i++)
		printf("at %#lx\n", kernel_ips[i]);
	return 0;
}
