/*
 * Anonymous mmap, a file-backed MAP_SHARED mapping whose writes read() sees,
 * and mprotect(PROT_NONE) followed by an access, which must raise SIGSEGV.
 * Finally, the stack top must be randomised, as exec does for any program.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf fault;

static void on_segv(int sig)
{
	siglongjmp(fault, 1);
}

/* As for any exec, the stack top is randomised (STACK_TOP is 0x7ffffffff000). */
static void print_stack_randomised(void)
{
	unsigned long start, end, stack_end = 0;
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			stack_end = end;
	if (f)
		fclose(f);
	printf("stack top randomised: %s\n",
	       stack_end && stack_end != 0x7ffffffff000UL ? "yes" : "no");
}

int main(void)
{
	char *anon = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	memset(anon, 7, 1 << 20);
	printf("anonymous mmap: last byte %d\n", anon[(1 << 20) - 1]);

	int fd = open("/tmp/shared.bin", O_CREAT | O_RDWR | O_TRUNC, 0600);
	char buf[16] = { 0 };

	ftruncate(fd, 4096);
	char *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	strcpy(shared, "through the map");
	pread(fd, buf, sizeof(buf) - 1, 0);
	printf("MAP_SHARED write seen by read(): %s\n", buf);
	munmap(shared, 4096);
	close(fd);

	signal(SIGSEGV, on_segv);
	mprotect(anon, 4096, PROT_NONE);
	if (!sigsetjmp(fault, 1)) {
		anon[0] = 1;
		printf("PROT_NONE page was writable\n");
	} else {
		printf("PROT_NONE access raised SIGSEGV\n");
	}
	print_stack_randomised();
	return 0;
}
