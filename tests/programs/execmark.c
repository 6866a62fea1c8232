/*
 * A file a UKL program maps executable is its CPL0 code: only root's file
 * that no group or other user may write can be, and once mapped, only
 * what may load kernel code may write it.  Maps /tmp/ukl-lib executable
 * with mode 0666, then 0644 and owned by uid 1000, then root's with 0644;
 * then a child, root without CAP_SYS_MODULE, leaves UKL by exec'ing
 * busybox and appends to that file.  Then maps memfds executable: an
 * unsealed one, whose writers the inode does not count, and one sealed
 * against writes.  Prints one line each; on Linux everything is allowed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *result(void *p)
{
	return p != MAP_FAILED ? "mapped" : errno == EACCES ? "EACCES" : strerror(errno);
}

static int append_without_sys_module(const char *path)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		/* From the bounding set, so that the exec does not give it back */
		if (prctl(PR_CAPBSET_DROP, CAP_SYS_MODULE, 0, 0, 0))
			_exit(2);
		execl("/bin/busybox", "sh", "-c", "echo x >>\"$0\"", path, (char *)NULL);
		_exit(3);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static const char *map_as(const char *path, mode_t mode, uid_t owner)
{
	int fd = open(path, O_RDONLY);
	void *p;

	if (fd < 0 || chmod(path, mode) || chown(path, owner, 0))
		return strerror(errno);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	return result(p);
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
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page))
		return 2;
	close(fd);
	printf("mode 0666: %s\n", map_as(path, 0666, 0));
	printf("uid 1000's: %s\n", map_as(path, 0644, 1000));
	printf("root's 0644: %s\n", map_as(path, 0644, 0));
	printf("root without CAP_SYS_MODULE appends: %s\n",
	       append_without_sys_module(path) ? "refused" : "written");

	fd = memfd_with(0);
	p = mmap(NULL, sizeof(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	printf("unsealed memfd: %s\n", result(p));
	fd = memfd_with(F_SEAL_WRITE);
	p = mmap(NULL, sizeof(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	printf("sealed memfd: %s\n", result(p));
	return 0;
}
