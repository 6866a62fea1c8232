/*
 * A server that drops to uid 1000 and stays dumpable, as servers that
 * setuid() do, with an io_uring SQPOLL ring, whose kernel worker thread
 * shares the process's memory.  A second process of uid 1000, an ordinary
 * program (ukl-intruder), then tries to rewrite a code pointer that this
 * program calls, through each of its threads.
 *
 * On Linux that is allowed: the same user may trace its own processes.
 * Under UKL the pointer is called at CPL0, so every way must be refused.
 *
 * With the argument "root" the program stays root and the intruder runs
 * as root: allowed (CAP_SYS_ADMIN may control kernel code), except under
 * lockdown=integrity.
 */
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void intact(void)
{
}

static void (*volatile hook)(void) = intact;

static void rewritten(void)
{
	unsigned short cs;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	printf("the code pointer was rewritten: the intruder's choice ran at CPL%d\n", cs & 3);
	hook = intact;
}

int main(int argc, char **argv)
{
	int as_root = argc > 1 && !strcmp(argv[1], "root");
	struct io_uring_params params;
	char pid[16], addr[32], value[32];
	int status, ring;
	pid_t child;

	if (!as_root && (setgid(1000) || setuid(1000) || prctl(PR_SET_DUMPABLE, 1))) {
		perror("dropping to uid 1000");
		return 1;
	}
	memset(&params, 0, sizeof(params));
	params.flags = IORING_SETUP_SQPOLL;
	params.sq_thread_idle = 1000;
	ring = syscall(SYS_io_uring_setup, 4, &params);
	if (ring < 0) {
		perror("io_uring_setup");
		return 1;
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(addr, sizeof(addr), "%p", (void *)&hook);
	snprintf(value, sizeof(value), "%p", (void *)rewritten);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		execl("/bin/ukl-intruder", "ukl-intruder", pid, addr, value, (char *)NULL);
		perror("exec ukl-intruder");
		_exit(127);
	}
	while (waitpid(child, &status, WNOHANG) == 0)
		hook();
	hook();
	close(ring);
	return 0;
}
