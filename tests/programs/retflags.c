/*
 * The flags a system call returns with are the frame's, as on Linux, even
 * when the call's body changed them without asking for the slow exit.  The
 * module given as argv[1] (tests/boot/modules/setflags.c) makes
 * getppid(0x7e57) set EFLAGS.ID in the caller's frame, and getppid(0x7f57)
 * TF: the instruction after the call then traps, once.  getppid(0x1a57,
 * landing) returns to landing(), as Linux's SYSRET check sends it there.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EFLAGS_ID (1ul << 21)
#define LANDED "getppid(0x1a57): returned where its body chose\n"
#define EFLAGS_TF (1ul << 8)

static volatile int traps;

static void trapped(int sig, siginfo_t *info, void *context)
{
	ucontext_t *uc = context;

	traps++;
	uc->uc_mcontext.gregs[REG_EFL] &= ~EFLAGS_TF;
}

static unsigned long flags_after_getppid(long magic)
{
	unsigned long flags;

	syscall(SYS_getppid, magic);
	__asm__ volatile("pushfq; popq %0" : "=r"(flags));
	return flags;
}

/* Entered by a return, with no frame of its own to return through. */
static void landing(void)
{
	write(1, LANDED, sizeof(LANDED) - 1);
	_exit(0);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = trapped, .sa_flags = SA_SIGINFO };
	int fd = argc > 1 ? open(argv[1], O_RDONLY | O_CLOEXEC) : -1;

	if (fd < 0 || syscall(SYS_finit_module, fd, "", 0) != 0) {
		perror("loading the module");
		return 1;
	}
	printf("getppid(0): ID %s\n", flags_after_getppid(0) & EFLAGS_ID ? "set" : "clear");
	printf("getppid(0x7e57): ID %s\n",
	       flags_after_getppid(0x7e57) & EFLAGS_ID ? "set" : "clear");
	sigaction(SIGTRAP, &sa, NULL);
	flags_after_getppid(0x7f57);
	printf("getppid(0x7f57): %d SIGTRAP after it\n", traps);
	fflush(stdout);
	syscall(SYS_getppid, 0x1a57, landing);
	printf("getppid(0x1a57): returned after the call\n");
	return 0;
}
