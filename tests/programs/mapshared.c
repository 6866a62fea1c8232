/*
 * Write TEXT into FILE through a shared writable mapping, then msync: the
 * bytes must reach the file's host (a volume's host directory) by then.
 * Usage: mapshared FILE TEXT
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int fail(const char *what)
{
	printf("%s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	size_t len;
	char *map;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: mapshared FILE TEXT\n");
		return 2;
	}
	len = strlen(argv[2]);
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return fail("open");
	if (ftruncate(fd, len))
		return fail("ftruncate");
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return fail("mmap");
	memcpy(map, argv[2], len);
	if (msync(map, len, MS_SYNC))
		return fail("msync");
	printf("mapped, wrote and synced %zu bytes\n", len);
	return 0;
}
