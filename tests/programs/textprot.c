/*
 * mprotect() on the program's own code.  Linux lets a program change the
 * protection of its text mapping, and a program that only re-states it
 * (read and execute) goes on as before.  A UKL program's text is kernel
 * text mapped for CPL0, so a change that would make it something else is
 * refused (EACCES), and the text stays what it was: the program goes on.
 * Clearing the soft-dirty bits (clear_refs) recomputes a mapping's page
 * protection as mprotect() does, for the pages faulted in afterwards; it
 * leaves the text alone, which runs on after its pages are dropped
 * (MADV_DONTNEED) and faulted in again, and tracks the data as on Linux.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int __attribute__((noinline)) f(int x)
{
	return 3 * x + 1;
}

/* The mapping of /proc/self/maps that holds ADDR. */
static int mapping_of(void *addr, unsigned long *start, unsigned long *end)
{
	unsigned long a = (unsigned long)addr;
	char line[512];
	FILE *maps = fopen("/proc/self/maps", "r");
	int found = 0;

	while (maps && !found && fgets(line, sizeof(line), maps))
		found = sscanf(line, "%lx-%lx", start, end) == 2 && *start <= a && a < *end;
	if (maps)
		fclose(maps);
	return found;
}

/* A page of its own, which nothing else writes. */
static volatile int data[1024] __attribute__((aligned(4096))) = {1};

/* Bit 55 of the page's /proc/self/pagemap entry: written since the last clear. */
static int soft_dirty(const volatile void *addr)
{
	uint64_t entry = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0 || pread(fd, &entry, sizeof(entry),
			    (unsigned long)addr / 4096 * sizeof(entry)) != sizeof(entry))
		entry = 0;
	close(fd);
	return entry >> 55 & 1;
}

static const char *clear_refs(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);
	const char *result = fd >= 0 && write(fd, "4", 1) == 1 ? "ok" : strerror(errno);

	close(fd);
	return result;
}

static const char *try(unsigned long start, unsigned long end, int prot)
{
	return mprotect((void *)start, end - start, prot) ? strerror(errno) : "ok";
}

int main(void)
{
	int (*volatile fp)(int) = f;
	unsigned long start, end;
	const char *cleared;
	int before, after;

	if (!mapping_of((void *)f, &start, &end)) {
		printf("no mapping holds f\n");
		return 1;
	}
	printf("mprotect(text, PROT_READ | PROT_EXEC): %s\n",
	       try(start, end, PROT_READ | PROT_EXEC));
	printf("f(5) = %d\n", fp(5));
	printf("mprotect(text, PROT_EXEC): %s\n", try(start, end, PROT_EXEC));
	printf("f(5) = %d\n", fp(5));
	cleared = clear_refs();
	before = soft_dirty(data);
	data[0] = 2;
	after = soft_dirty(data);
	printf("clear_refs (soft-dirty): %s\n", cleared);
	printf("madvise(text, MADV_DONTNEED): %s\n",
	       madvise((void *)start, end - start, MADV_DONTNEED) ? strerror(errno) : "ok");
	printf("f(5) = %d\n", fp(5));
	printf("data soft-dirty: %d, after a write: %d\n", before, after);
	return 0;
}
