/*
 * sigaltstack() as glibc has it, for sigaltstack/sas (built with
 * -Dsigaltstack=linux_sigaltstack): the flags go to the kernel, which takes
 * SS_ONSTACK as 0.  musl refuses SS_ONSTACK with EINVAL, and the test asks
 * for SS_ONSTACK | SS_AUTODISARM, so it skipped, saying the kernel lacked
 * SS_AUTODISARM.
 */
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigaltstack(const stack_t *ss, stack_t *old)
{
	return syscall(SYS_sigaltstack, ss, old);
}
