/*
 * Fill a file until the filesystem is full: each write is 64 KiB, then
 * fsync.  Prints how the writes and the fsync ended, so that a full volume
 * shows as ENOSPC (not a hang or a panic).  A write may return 0 first:
 * Linux's 9p client does at the write that meets the full disk.
 * Usage: fill PATH
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char block[64 * 1024];

int main(int argc, char **argv)
{
	long kib = 0;
	int zeros = 0;
	ssize_t n;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: fill PATH\n");
		return 2;
	}
	fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0) {
		printf("open: %s\n", strerror(errno));
		return 1;
	}
	memset(block, 'x', sizeof(block));
	while ((n = write(fd, block, sizeof(block))) >= 0 && zeros < 3) {
		zeros += n == 0;
		kib += n / 1024;
	}
	printf("write after %ld KiB: %s\n", kib, n < 0 ? strerror(errno) : "end");
	printf("fsync: %s\n", fsync(fd) ? strerror(errno) : "ok");
	return n < 0 && errno == ENOSPC ? 0 : 1;
}
