/*
 * A 32-bit system call by INT $0x80, which Linux runs for a 64-bit process
 * too: getpid's number there is 20.  A UKL process has no 32-bit ABI and
 * gets SIGSEGV, as every process does with IA32 emulation off.  ukl-cc
 * refuses the instruction, so it hides in a mov's immediate: entered one
 * byte in, "b8 cd 80 eb 00" is "int $0x80; jmp .+2".  Then an ordinary
 * 32-bit program runs, if the guest has one (/bin/hello32).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static sigjmp_buf trapped;

static void on_segv(int sig)
{
	siglongjmp(trapped, sig);
}

int main(void)
{
	long pid = 20;
	int status;

	signal(SIGSEGV, on_segv);
	if (sigsetjmp(trapped, 1)) {
		printf("int $0x80: SIGSEGV\n");
	} else {
		__asm__ volatile("jmp 1f+1\n1:\tmovl $0x00eb80cd, %%eax"
				 : "+a"(pid) : : "memory");
		printf("int $0x80: getpid() %s\n", pid == getpid() ? "ok" : "wrong");
	}
	fflush(stdout);
	if (access("/bin/hello32", X_OK))
		return 0;
	if (fork() == 0) {
		execl("/bin/hello32", "hello32", (char *)0);
		_exit(127);
	}
	wait(&status);
	printf("hello32: status %d\n", WEXITSTATUS(status));
	return 0;
}
