/*
 * The UKL options a thread runs with (ARCH_UKL_GET_OPTS), and what UKL_BYP
 * must keep: a signal sent to a thread that loops on system calls is
 * delivered before its next call returns, and a seccomp filter still applies.
 * On a kernel without UKL (or for a non-UKL process) the arch_prctl fails.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH_UKL_GET_OPTS 0x6001
#define ARCH_UKL_SET_OPTS 0x6002
#define ROUNDS 1000

static volatile sig_atomic_t handled;
static volatile int sent, late, round_done;

static void on_usr1(int sig)
{
	handled++;
}

static long ukl_opts(void)
{
	unsigned long opts;

	if (syscall(SYS_arch_prctl, ARCH_UKL_GET_OPTS, &opts))
		return -errno;
	return opts;
}

/* Loops on getppid(); a signal pending before a call must be handled by its return. */
static void *caller(void *arg)
{
	int seen = 0;

	while (seen < ROUNDS) {
		int before = __atomic_load_n(&sent, __ATOMIC_ACQUIRE);

		getppid();
		if (handled < before)
			late++;
		if (handled > seen) {
			seen = handled;
			__atomic_store_n(&round_done, seen, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

static int deny_getppid(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int main(void)
{
	long opts = ukl_opts();
	pthread_t t;
	int i;

	if (opts < 0)
		printf("opts: none (%s)\n", opts == -EINVAL ? "not a UKL process" : "error");
	else
		printf("opts: byp=%ld ret=%ld\n", opts & 1, (opts >> 1) & 1);

	signal(SIGUSR1, on_usr1);
	pthread_create(&t, NULL, caller, NULL);
	for (i = 1; i <= ROUNDS; i++) {
		pthread_kill(t, SIGUSR1);
		__atomic_store_n(&sent, i, __ATOMIC_RELEASE);
		while (__atomic_load_n(&round_done, __ATOMIC_ACQUIRE) < i)
			sched_yield();
	}
	pthread_join(t, NULL);
	printf("signals: %d sent, %d handled, %d late\n", ROUNDS, (int)handled, late);

	if (opts >= 0) {
		/* The per-thread switch: off and on again. */
		if (syscall(SYS_arch_prctl, ARCH_UKL_SET_OPTS, 0) || ukl_opts() != 0 ||
		    syscall(SYS_arch_prctl, ARCH_UKL_SET_OPTS, opts) || ukl_opts() != opts)
			printf("switch: failed\n");
		else
			printf("switch: ok\n");
	}
	if (deny_getppid())
		perror("seccomp");
	errno = 0;
	i = syscall(SYS_getppid);	/* getppid() itself cannot fail, so it sets no errno */
	printf("seccomp: getppid() = %d, %s\n", i, errno == EPERM ? "EPERM" : "allowed");
	return late != 0;
}
