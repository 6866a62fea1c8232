/*
 * Waits for a machine check on a page of its own: prints the page's
 * physical address (root reads it from /proc/self/pagemap), then reads the
 * page until it is killed.  The host injects an uncorrected, action-required
 * data-load error at that address (QEMU's monitor command "mce").  Linux
 * kills a user process that consumes it with SIGBUS and keeps the machine;
 * a UKL program, which runs at CPL0, must get the same.
 *
 * With "irqs-off" (UKL only: CPL3 may not cli) it reads the page for a
 * few seconds with interrupts off first, and says so if that loop ends.
 * The host's error says the interrupted ip is not valid (RIPV clear), so
 * the program must not go on from it: it is killed without finishing that
 * loop.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile char page[4096] __attribute__((aligned(4096)));

#define OFF_READS 1000000000UL
#define WENT_ON "the reads with interrupts off went on to their end\n"

/*
 * Read the page with interrupts off, as only kernel code may (the call
 * after the cli passes ukl-cc's check that a cli only enters the kernel).
 */
static void read_with_interrupts_off(void)
{
	unsigned long i;

	__asm__ volatile("cli\n\tcall 1f\n\tjmp 2f\n1:\tret\n2:" ::: "memory");
	for (i = 0; i < OFF_READS; i++)
		(void)page[0];
	/* Before the sti: the kill would come with the first interrupt. */
	write(1, WENT_ON, strlen(WENT_ON));
	__asm__ volatile("sti" ::: "memory");
}

int main(int argc, char **argv)
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
	if (argc > 1 && !strcmp(argv[1], "irqs-off"))
		read_with_interrupts_off();
	for (;;)
		(void)page[0];
}
