/*
 * Waits for a machine check on a page of its own: prints the page's
 * physical address (root reads it from /proc/self/pagemap), then reads the
 * page until it is killed.  The host injects an uncorrected, action-required
 * data-load error at that address (QEMU's monitor command "mce").  Linux
 * kills a user process that consumes it with SIGBUS and keeps the machine;
 * a UKL program, which runs at CPL0, must get the same.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static volatile char page[4096] __attribute__((aligned(4096)));

int main(void)
{
	uint64_t entry = 0;
	int fd;

	page[0] = 1;
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0 || pread(fd, &entry, sizeof(entry), (uintptr_t)page / 4096 * 8) != sizeof(entry) ||
	    !(entry >> 63)) {
		perror("pagemap");
		return 1;
	}
	printf("page at physical address 0x%llx\n",
	       (unsigned long long)((entry & ((1ULL << 55) - 1)) * 4096));
	fflush(stdout);
	for (;;)
		(void)page[0];
}
