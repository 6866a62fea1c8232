/*
 * Work for a profiler, in the program and in the kernel: each round sums a
 * buffer (program code) and writes it to a file on tmpfs (kernel code),
 * each from a function of its own, so that call graphs have frames to
 * show.  Usage: perfload [ROUNDS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char buf[4096];

static __attribute__((noinline)) unsigned long checksum(const char *p, size_t n)
{
	unsigned long sum = 0;

	for (size_t i = 0; i < n; i++)
		sum = sum * 31 + (unsigned char)p[i];
	return sum;
}

static __attribute__((noinline)) int save(int fd, const char *p, size_t n)
{
	return pwrite(fd, p, n, 0) == (ssize_t)n ? 0 : -1;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20000;
	int fd = open("/tmp/perfload", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	unsigned long sum = 0;

	if (fd < 0)
		return 1;
	for (long i = 0; i < rounds; i++) {
		buf[i % sizeof(buf)] = (char)i;
		sum += checksum(buf, sizeof(buf));
		if (save(fd, buf, sizeof(buf)))
			return 1;
	}
	printf("%ld rounds, checksum %lx\n", rounds, sum & 0xffff);
	return 0;
}
