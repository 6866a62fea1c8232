/*
 * Map files shared that the program itself, or another process of it,
 * holds open for writing, as SQLite maps a database that two of its
 * connections have open read-write.  Each line is "<case>: <result>"; on
 * Linux every mapping is made, and so it must be under UKL.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

static int create(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd >= 0 && ftruncate(fd, PAGE)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void try_map(const char *what, int fd, int prot)
{
	void *map = fd < 0 ? MAP_FAILED : mmap(NULL, PAGE, prot, MAP_SHARED, fd, 0);

	printf("%s: %s\n", what, map == MAP_FAILED ? strerror(errno) : "mapped");
	if (map != MAP_FAILED)
		munmap(map, PAGE);
}

int main(void)
{
	int ready[2], done[2], first;
	char byte;
	pid_t child;

	create("/tmp/ownwriters-a");
	try_map("read-only, through the second of two read-write fds",
		open("/tmp/ownwriters-a", O_RDWR), PROT_READ);
	first = create("/tmp/ownwriters-b");
	open("/tmp/ownwriters-b", O_RDWR);
	try_map("read-write, through the first of two", first, PROT_READ | PROT_WRITE);

	/* A forked child, another process of the program, holds the file open. */
	if (pipe(ready) || pipe(done))
		return 1;
	child = fork();
	if (child == 0) {
		int fd = create("/tmp/ownwriters-c");

		write(ready[1], "r", 1);
		read(done[0], &byte, 1);
		_exit(fd < 0);
	}
	read(ready[0], &byte, 1);
	try_map("read-write, while a forked child holds it open for writing",
		open("/tmp/ownwriters-c", O_RDWR), PROT_READ | PROT_WRITE);
	write(done[1], "d", 1);
	waitpid(child, NULL, 0);
	unlink("/tmp/ownwriters-a");
	unlink("/tmp/ownwriters-b");
	unlink("/tmp/ownwriters-c");
	return 0;
}
