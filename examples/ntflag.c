/*
 * A program sets EFLAGS.NT and then makes system calls.  On Linux SYSCALL
 * clears NT for the kernel and the return restores it; a UKL system call
 * must do the same (an IRET inside the kernel with NT set would fault).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NT (1UL << 14)

static unsigned long flags(void)
{
	unsigned long f;

	__asm__ volatile("pushf; pop %0" : "=r"(f));
	return f;
}

static void set_flags(unsigned long f)
{
	__asm__ volatile("push %0; popf" : : "r"(f) : "cc", "memory");
}

int main(void)
{
	static const char msg[] = "write with NT set\n";
	int calls = 0, kept = 0;

	set_flags(flags() | NT);
	for (int i = 0; i < 1000; i++) {
		calls += getppid() > 0;
		kept += !!(flags() & NT);
	}
	calls += write(1, msg, strlen(msg)) == (ssize_t)strlen(msg);
	kept += !!(flags() & NT);
	set_flags(flags() & ~NT);
	printf("%d system calls with NT set succeeded; NT still set after %d\n", calls, kept);
	return 0;
}
