/*
 * The flags a system call returns with are the frame's, as on Linux, even
 * when the call's body changed them without asking for the slow exit.  The
 * module given as argv[1] (tests/boot/modules/setflags.c) makes
 * getppid(0x7e57) set EFLAGS.ID in the caller's frame.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EFLAGS_ID (1ul << 21)

static unsigned long flags_after_getppid(long magic)
{
	unsigned long flags;

	syscall(SYS_getppid, magic);
	__asm__ volatile("pushfq; popq %0" : "=r"(flags));
	return flags;
}

int main(int argc, char **argv)
{
	int fd = argc > 1 ? open(argv[1], O_RDONLY | O_CLOEXEC) : -1;

	if (fd < 0 || syscall(SYS_finit_module, fd, "", 0) != 0) {
		perror("loading the module");
		return 1;
	}
	printf("getppid(0): ID %s\n", flags_after_getppid(0) & EFLAGS_ID ? "set" : "clear");
	printf("getppid(0x7e57): ID %s\n",
	       flags_after_getppid(0x7e57) & EFLAGS_ID ? "set" : "clear");
	return 0;
}
