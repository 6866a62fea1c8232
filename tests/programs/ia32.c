/*
 * A UKL program beside 32-bit ones, on a kernel with IA32 emulation booted
 * with ia32_emulation=on: /bin/compat32 (compat32.c) runs, executes this
 * program from a 32-bit system call and traces it.  The kernel's view of
 * this program stays 64-bit (the register set a tracer reads), and its own
 * "int $0x80" makes a 32-bit system call, as on Linux.
 */
#include <elf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static int cpl(void)
{
	unsigned short cs;

	asm("mov %%cs, %0" : "=r"(cs));
	return cs & 3;
}

static void run(char *const argv[])
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	printf("%s %s: exit %d\n", argv[0], argv[1], WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* The size of the general registers a 64-bit tracer reads from a copy of this program */
static void regset(void)
{
	struct user_regs_struct regs;
	struct iovec iov = { &regs, sizeof(regs) };
	pid_t pid = fork();

	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	if (ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &iov))
		perror("PTRACE_GETREGSET");
	else
		printf("regset: %zu bytes (64-bit: %zu)\n", iov.iov_len, sizeof(regs));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static volatile int handled_at = -1;

static void on_usr1(int sig)
{
	handled_at = cpl();
}

/* i386 rt_sigaction's struct: handler, flags, restorer, mask */
struct sigaction32 {
	unsigned int handler, flags, restorer, mask[2];
};

static long int80_call(long nr, long a, long b, long c, long d)
{
	long ret;

	asm volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d)
		     : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

/*
 * A handler that a 32-bit rt_sigaction installs, then a 32-bit sigreturn.
 * Linux runs such a handler as 32-bit code (this program's would crash);
 * a UKL program's code is 64-bit code at CPL0, so its handler is entered
 * as 64-bit code, and a 32-bit sigreturn is refused with SIGSEGV.
 */
static void compat_signals(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	unsigned long old[4];
	int status;
	pid_t pid;

	if (cpl() == 3) {
		puts("32-bit rt_sigaction: not tried at CPL3");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* static: a 32-bit system call's pointers are 32-bit */
		static struct sigaction32 sa32 = { .flags = SA_RESTORER };

		/* musl's restorer, which a 64-bit frame needs */
		sigaction(SIGUSR1, &sa, NULL);
		syscall(SYS_rt_sigaction, SIGUSR1, NULL, old, 8);
		sa32.handler = (unsigned long)on_usr1;
		sa32.restorer = old[2];
		if (int80_call(174, SIGUSR1, (long)&sa32, 0, 8))  /* i386 rt_sigaction */
			puts("32-bit rt_sigaction: failed");
		raise(SIGUSR1);
		printf("32-bit rt_sigaction: the handler ran at CPL%d\n", handled_at);
		fflush(stdout);
		int80_call(119, 0, 0, 0, 0);		/* i386 sigreturn */
		puts("32-bit sigreturn: returned");
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		printf("32-bit sigreturn: killed by signal %d\n", WTERMSIG(status));
}

static void int80(void)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		long ret = int80_call(20, 0, 0, 0, 0);		/* i386 getpid */

		printf("int $0x80: %s\n", ret == getpid() ? "the pid" : "not the pid");
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		printf("int $0x80: killed by signal %d\n", WTERMSIG(status));
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		printf("%s, executed by a 32-bit program: CPL%d\n", argv[1], cpl());
		return 0;
	}
	printf("this program: CPL%d\n", cpl());
	run((char *[]){ "/bin/compat32", "run", NULL });
	run((char *[]){ "/bin/compat32", "exec", argv[0], "exec", NULL });
	run((char *[]){ "/bin/compat32", "trace", argv[0], "traced", NULL });
	regset();
	int80();
	compat_signals();
	return 0;
}
