/*
 * ukl-exec FILE [ARG...]: start FILE, an unmodified executable, as a UKL
 * program at CPL0 (execveat() with AT_EXECVE_UKL), with ARGs and this
 * process's environment.  It needs what loading a module needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define AT_EXECVE_UKL 0x20000

extern char **environ;

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: ukl-exec FILE [ARG...]\n");
		return 2;
	}
	syscall(SYS_execveat, AT_FDCWD, argv[1], argv + 1, environ, AT_EXECVE_UKL);
	fprintf(stderr, "ukl-exec: cannot start %s at CPL0: %s\n", argv[1], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
