/*
 * Time: clock_gettime, nanosleep and gettimeofday.  Then a seccomp filter
 * makes the clock_gettime system call fail, to show which clocks are read
 * without entering the kernel (the vDSO, or UKL's in-kernel copy of it).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

static int forbid_clock_gettime_syscall(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(insns) / sizeof(insns[0]), insns };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static double seconds(struct timespec t)
{
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void)
{
	struct timespec start, end, prev, now, real, nap = { 0, 50 * 1000 * 1000 };
	struct timeval tv;
	int backwards = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	if (nanosleep(&nap, NULL))
		perror("nanosleep");
	clock_gettime(CLOCK_MONOTONIC, &end);
	printf("nanosleep(50 ms) slept at least 50 ms: %s\n",
	       seconds(end) - seconds(start) >= 0.05 ? "yes" : "no");

	prev = end;
	for (int i = 0; i < 10000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		backwards += seconds(now) < seconds(prev);
		prev = now;
	}
	printf("CLOCK_MONOTONIC went backwards %d times in 10000 reads\n", backwards);

	clock_gettime(CLOCK_REALTIME, &real);
	gettimeofday(&tv, NULL);
	printf("gettimeofday within 1 s of CLOCK_REALTIME: %s\n",
	       tv.tv_sec + tv.tv_usec / 1e6 - seconds(real) < 1.0 ? "yes" : "no");
	printf("the clock is past 2020: %s\n", real.tv_sec > 1577836800 ? "yes" : "no");
	printf("invalid clock: %s\n",
	       clock_gettime(12345, &now) == -1 && errno == EINVAL ? "EINVAL" : "unexpected");

	if (forbid_clock_gettime_syscall()) {
		perror("seccomp");
		return 1;
	}
	printf("with the system call forbidden: CLOCK_MONOTONIC %s, CLOCK_PROCESS_CPUTIME_ID %s\n",
	       clock_gettime(CLOCK_MONOTONIC, &now) ? strerror(errno) : "read",
	       clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now) ? strerror(errno) : "read");
	return 0;
}
