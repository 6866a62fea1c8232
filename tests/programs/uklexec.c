/*
 * Who may start a file at CPL0 (execveat() with AT_EXECVE_UKL), as an
 * ordinary process on the UKL kernel: uid 1000, then root without
 * CAP_SYS_MODULE, each in a child, and each must get EPERM; then root
 * itself, which execs FILE.  Prints one line per child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define AT_EXECVE_UKL 0x20000

extern char **environ;

static const char *name(int err)
{
	return err == EPERM ? "EPERM" : err == EINVAL ? "EINVAL" : strerror(err);
}

static int ukl_exec(char *file)
{
	char *argv[] = { file, NULL };

	syscall(SYS_execveat, AT_FDCWD, file, argv, environ, AT_EXECVE_UKL);
	return errno;
}

static int drop_sys_module(void)
{
	struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &head, data))
		return -1;
	data[0].effective &= ~(1u << CAP_SYS_MODULE);
	data[0].permitted &= ~(1u << CAP_SYS_MODULE);
	data[0].inheritable &= ~(1u << CAP_SYS_MODULE);
	return syscall(SYS_capset, &head, data);
}

static void child(const char *who, int (*drop)(void), char *file)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (drop()) {
			printf("%s: cannot drop privileges: %s\n", who, strerror(errno));
			_exit(2);
		}
		printf("%s: %s\n", who, name(ukl_exec(file)));
		_exit(1);
	}
	waitpid(pid, &status, 0);
}

static int to_uid_1000(void)
{
	return setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: uklexec FILE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	child("uid 1000", to_uid_1000, argv[1]);
	child("root without CAP_SYS_MODULE", drop_sys_module, argv[1]);
	printf("root: %s\n", name(ukl_exec(argv[1])));
	return 1;
}
