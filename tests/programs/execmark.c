/*
 * A file a UKL program maps executable is its CPL0 code: another user may
 * no longer write it.  Maps /tmp/ukl-lib (mode 0666) executable, then a
 * child becomes uid 1000, leaves UKL by exec'ing busybox, and appends to
 * the file.  Then maps memfds executable: an unsealed one, whose writers
 * the inode does not count, and one sealed against writes.  Prints one
 * line each; on Linux everything is allowed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *result(void *p)
{
	return p != MAP_FAILED ? "mapped" : errno == EACCES ? "EACCES" : strerror(errno);
}

static int other_user_appends(const char *path)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
			_exit(2);
		execl("/bin/busybox", "sh", "-c", "echo x >>\"$0\"", path, (char *)NULL);
		_exit(3);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int memfd_with(unsigned int seals)
{
	char page[4096];
	int fd = memfd_create("ukl-code", MFD_ALLOW_SEALING);

	memset(page, 0xc3, sizeof(page));	/* ret */
	if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page))
		return -1;
	if (seals && fcntl(fd, F_ADD_SEALS, seals))
		return -1;
	return fd;
}

int main(void)
{
	const char *path = "/tmp/ukl-lib";
	char page[4096];
	void *p;
	int fd;

	setvbuf(stdout, NULL, _IONBF, 0);
	memset(page, 0xc3, sizeof(page));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0666);
	if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page) || fchmod(fd, 0666))
		return 2;
	close(fd);
	fd = open(path, O_RDONLY);
	p = mmap(NULL, sizeof(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	printf("file: %s\n", result(p));
	printf("uid 1000 appends: %s\n", other_user_appends(path) ? "refused" : "written");

	fd = memfd_with(0);
	p = mmap(NULL, sizeof(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	printf("unsealed memfd: %s\n", result(p));
	fd = memfd_with(F_SEAL_WRITE);
	p = mmap(NULL, sizeof(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	printf("sealed memfd: %s\n", result(p));
	return 0;
}
