/*
 * Who may control a UKL program.  Writing its memory or its registers
 * chooses what its CPL0 code does, which is loading kernel code, so it
 * takes what insmod takes: CAP_SYS_MODULE and CAP_SYS_ADMIN, modules not
 * disabled, and no lockdown.
 *
 * An ordinary process (ukl-intruder, at CPL3) tries to rewrite a code
 * pointer that this program, started as root, then calls:
 *  - as root without CAP_SYS_MODULE (a container's --cap-add SYS_ADMIN),
 *    and as root, through /proc/PID/mem, process_vm_writev() and
 *    PTRACE_SEIZE;
 *  - as the parent that the program, dropped to nobody, asks to trace it
 *    (PTRACE_TRACEME): nobody, root without CAP_SYS_MODULE, and root;
 *  - as a parent that is nobody, asked by the program before its exec;
 *  - as the holder of a seccomp listener the program was executed under,
 *    which answers its getppid();
 *  - as root again, both ways, after kernel.modules_disabled=1.
 *
 * Each attempt is a section "== who", then the intruder's lines, then the
 * CPL at which its choice ran, if it did.  On Linux every one of them is
 * allowed, and the choice runs at CPL3.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static int ran_at = -1;

static void intact(void)
{
}

static void (*volatile hook)(void) = intact;

static void rewritten(void)
{
	unsigned short cs;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	ran_at = cs & 3;
	hook = intact;
}

static void report(void)
{
	hook();
	if (ran_at >= 0)
		printf("the intruder's choice ran at CPL%d\n", ran_at);
	ran_at = -1;
	fflush(stdout);
}

/* Run ukl-intruder with ARGS, calling the hook until it has finished. */
static void intrude(const char *who, char *const args[])
{
	int status;
	pid_t child;

	printf("== %s\n", who);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		execv("/bin/ukl-intruder", args);
		perror("exec ukl-intruder");
		_exit(127);
	}
	while (waitpid(child, &status, WNOHANG) == 0)
		hook();
	report();
}

static void write_it(const char *who, const char *how)
{
	char pid[16], addr[32], value[32];
	char *args[] = { "ukl-intruder", pid, addr, value, (char *)how, NULL };

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(addr, sizeof(addr), "%p", (void *)&hook);
	snprintf(value, sizeof(value), "%p", (void *)rewritten);
	intrude(who, args);
}

static void listen_to(const char *who, char *self)
{
	char *args[] = { "ukl-intruder", "listener", self, NULL };

	intrude(who, args);
}

static void trace_me(const char *who, const char *how, char *self)
{
	char addr[32], value[32];
	char *args[] = { "ukl-intruder", "parent", (char *)how, self, addr, value, NULL };

	snprintf(addr, sizeof(addr), "%p", (void *)&hook);
	snprintf(value, sizeof(value), "%p", (void *)rewritten);
	intrude(who, args);
}

/* The program under a seccomp listener: what getppid() gave it. */
static int listened(void)
{
	unsigned short cs;
	long ppid = getppid();

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	if (ppid == 4242)
		printf("getppid() forged by the listener: ok\n"
		       "the intruder's choice ran at CPL%d\n", cs & 3);
	else
		printf("getppid() forged by the listener: no (%ld)\n", ppid);
	return 0;
}

/*
 * The program as the child of an intruder's "parent": drop to nobody, as a
 * server does, and ask the parent to trace it (an anti-debugging idiom, or
 * a self-debug mode).
 */
static int traced(void)
{
	if (setgid(65534) || setuid(65534) || prctl(PR_SET_DUMPABLE, 1)) {
		perror("dropping to nobody");
		return 1;
	}
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
		printf("PTRACE_TRACEME: %s\n", strerror(errno));
		return 0;
	}
	printf("PTRACE_TRACEME: ok\n");
	fflush(stdout);
	raise(SIGSTOP);
	report();
	return 0;
}

static int disable_modules(void)
{
	int fd = open("/proc/sys/kernel/modules_disabled", O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, "1", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	static char self[PATH_MAX];

	if (argc > 1 && !strcmp(argv[1], "traced"))
		return traced();
	if (argc > 1 && !strcmp(argv[1], "report")) {
		report();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "listened"))
		return listened();
	if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0) {
		perror("/proc/self/exe");
		return 1;
	}
	write_it("root without CAP_SYS_MODULE", "nomodule");
	write_it("root", NULL);
	trace_me("a parent as nobody", "nobody", self);
	trace_me("a parent as root without CAP_SYS_MODULE", "nomodule", self);
	trace_me("a parent as root", "root", self);
	trace_me("a parent as nobody, asked before the exec", "early", self);
	listen_to("the holder of a seccomp listener", self);
	if (disable_modules()) {
		printf("kernel.modules_disabled: %s\n", strerror(errno));
		return 1;
	}
	write_it("root, modules disabled", NULL);
	trace_me("a parent as root, modules disabled", "root", self);
	return 0;
}
