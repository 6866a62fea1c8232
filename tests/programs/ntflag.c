/*
 * A program sets EFLAGS.NT and then makes system calls.  On Linux SYSCALL
 * clears NT for the kernel and the return restores it; a UKL system call
 * must do the same (an IRET inside the kernel with NT set would fault).
 * The same for DF, set around one write (the kernel's copies would run
 * backwards with it).
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

#define DF (1UL << 10)

/* write(2) with DF set, as hand-written assembly may make it */
static long write_with_df(const char *msg, unsigned long len, unsigned long *after)
{
	long ret;

	__asm__ volatile("std\n\tsyscall\n\tpushf\n\tpop %1\n\tcld"
			 : "=a"(ret), "=r"(*after)
			 : "a"(1L), "D"(1L), "S"(msg), "d"(len)
			 : "rcx", "r11", "memory", "cc");
	return ret;
}

int main(void)
{
	static const char msg[] = "write with NT set\n";
	/* long enough for the kernel's copy to take a string instruction */
	static const char df_msg[] = "write with DF set: the kernel must copy this "
				     "line forwards, or what it prints comes out garbled\n";
	unsigned long df_after;
	int calls = 0, kept = 0;
	long df_ret;

	set_flags(flags() | NT);
	for (int i = 0; i < 1000; i++) {
		calls += getppid() > 0;
		kept += !!(flags() & NT);
	}
	calls += write(1, msg, strlen(msg)) == (ssize_t)strlen(msg);
	kept += !!(flags() & NT);
	set_flags(flags() & ~NT);
	fflush(stdout);
	df_ret = write_with_df(df_msg, strlen(df_msg), &df_after);
	printf("write with DF set returned %ld; DF %s after it\n", df_ret,
	       df_after & DF ? "still set" : "clear");
	printf("%d system calls with NT set succeeded; NT still set after %d\n", calls, kept);
	return 0;
}
