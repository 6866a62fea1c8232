/* A program that enters the kernel with its own inline SYSCALL, as fio's
 * io_uring engine and liburing do.  ukl-cc turns it into the UKL entry. */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static long raw_syscall1(long nr, long a)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a) : "rcx", "r11", "memory");
	return ret;
}

int main(void)
{
	long ppid = raw_syscall1(SYS_getppid, 0);
	long bad = raw_syscall1(SYS_close, -1);

	printf("getppid: %s\n", ppid == getppid() ? "same as libc" : "differs");
	printf("close(-1): %ld\n", bad);
	return ppid == getppid() && bad == -9 ? 0 : 1;
}
