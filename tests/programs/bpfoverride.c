/*
 * A BPF kprobe program with bpf_override_return() chooses what a system
 * call returns.  For a UKL program, whose CPL0 code acts on the result (an
 * mmap() that returns a kernel address is memory it then writes), that is
 * controlling it, which takes what insmod takes; an observability agent has
 * CAP_BPF and CAP_PERFMON, not that.
 *
 * An ordinary process (ukl-intruder bpf, at CPL3) keeps CAP_BPF and
 * CAP_PERFMON only and makes this process's getppid() return a kernel
 * address.  This program calls getppid() while the intruder runs and says
 * what it got.  On Linux the intruder's value arrives; under UKL its parent's pid
 * does.
 */
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORGED 0xffffffff81000000UL

int main(void)
{
	char pid[16], value[32];
	char *args[] = { "ukl-intruder", "bpf", pid, value, NULL };
	unsigned long got = 0;
	pid_t parent = getppid(), child;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(value, sizeof(value), "%#lx", FORGED);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		execv("/bin/ukl-intruder", args);
		perror("exec ukl-intruder");
		_exit(127);
	}
	/* The intruder keeps its program attached for two seconds. */
	while (waitpid(child, NULL, WNOHANG) == 0) {
		got = syscall(SYS_getppid);
		if (got != (unsigned long)parent)
			break;
		usleep(5000);
	}
	waitpid(child, NULL, 0);
	if (got == (unsigned long)parent)
		printf("getppid(): its parent\n");
	else
		printf("getppid(): %#lx%s\n", got, got == FORGED ? ", the intruder's" : "");
	return 0;
}
