/*
 * The heap from 1 KB to 64 MB: brk directly, then malloc/free, which musl
 * serves from brk-grown and mmapped memory.  Every byte is written and read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned long checksum(const unsigned char *p, size_t n)
{
	unsigned long sum = 0;

	for (size_t i = 0; i < n; i += 512)
		sum += p[i];
	return sum;
}

int main(void)
{
	uintptr_t start = syscall(SYS_brk, 0);
	uintptr_t end = syscall(SYS_brk, start + (1 << 20));

	if (end != start + (1 << 20)) {
		printf("brk failed\n");
		return 1;
	}
	memset((void *)start, 0x5a, 1 << 20);
	printf("brk: grew by 1 MB, checksum %lu\n", checksum((void *)start, 1 << 20));
	syscall(SYS_brk, start);

	for (size_t size = 1024; size <= (64u << 20); size *= 4) {
		unsigned char *p = malloc(size);

		if (!p) {
			printf("malloc(%zu) failed\n", size);
			return 1;
		}
		memset(p, (int)((size >> 10) % 251 + 1), size);
		printf("malloc %6zu KB: checksum %lu\n", size >> 10, checksum(p, size));
		free(p);
	}
	return 0;
}
