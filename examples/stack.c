/*
 * Stack growth: recursion grows the main stack by 8 MB and a thread's stack
 * by 1 MB, one untouched page at a time.  Under UKL each new page is a page
 * fault taken at CPL0 on the stack that is growing.
 *
 * Then timer interrupts arrive while RSP sits 64 bytes above a page that is
 * not present.  Nothing may be pushed below RSP: not by the CPU, not by the
 * kernel's entry code.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define MB (1024UL * 1024)

static unsigned long recurse(const char *top, unsigned long bytes)
{
	volatile char frame[4096];

	frame[0] = 1;
	frame[sizeof(frame) - 1] = 1;
	if ((unsigned long)(top - (const char *)frame) >= bytes)
		return 1;
	return recurse(top, bytes) + frame[0];
}

static unsigned long grow(unsigned long bytes)
{
	char top;

	return recurse(&top, bytes);
}

/* The number in the first line of PATH that matches FORMAT (one %ld), or -1. */
static long proc_number(const char *path, const char *format)
{
	char line[512];
	long value = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, format, &value) == 1)
			break;
	if (f)
		fclose(f);
	return value;
}

static void *thread_main(void *arg)
{
	return (void *)grow(1 * MB);
}

/* Local timer interrupts taken so far by CPU 0 (the first column). */
static long timer_interrupts(void)
{
	return proc_number("/proc/interrupts", " LOC: %ld");
}

/* Spin with RSP at sp, touching no memory. */
static void spin_with_stack_at(char *sp, unsigned long loops)
{
	asm volatile("mov %%rsp, %%r12\n\t"
		     "mov %0, %%rsp\n"
		     "1:\tdec %1\n\t"
		     "jnz 1b\n\t"
		     "mov %%r12, %%rsp"
		     : "+r"(sp), "+r"(loops) : : "r12", "memory", "cc");
}

static void interrupts_at_a_page_edge(void)
{
	long page = sysconf(_SC_PAGESIZE), ticks = 0, start;
	char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *edge = map + page, *sp = edge + 64, pattern[64];
	unsigned char resident = 1;
	cpu_set_t cpu0;
	int chunk;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (map == MAP_FAILED || sched_setaffinity(0, sizeof(cpu0), &cpu0)) {
		perror("interrupts_at_a_page_edge");
		return;
	}
	memset(pattern, 0x5a, sizeof(pattern));
	memcpy(edge, pattern, sizeof(pattern));
	start = timer_interrupts();
	for (chunk = 0; chunk < 1000 && ticks < 5; chunk++) {
		spin_with_stack_at(sp, 1000000);
		ticks = timer_interrupts() - start;
	}
	mincore(map, page, &resident);
	printf("timer interrupts while RSP sat 64 bytes above a missing page: %s\n",
	       ticks >= 5 ? "at least 5" : "too few");
	printf("the 64 bytes below RSP are unchanged: %s\n",
	       memcmp(edge, pattern, sizeof(pattern)) ? "no" : "yes");
	printf("the page below is still not present: %s\n", resident & 1 ? "no" : "yes");
	munmap(map, 2 * page);
}

int main(void)
{
	struct rlimit lim = { 64 * MB, RLIM_INFINITY };
	pthread_attr_t attr;
	pthread_t thread;
	void *frames;

	if (setrlimit(RLIMIT_STACK, &lim))
		perror("setrlimit");
	printf("main stack: %lu frames of 4 KB\n", grow(8 * MB));
	printf("main stack VMA is at least 8 MB: %s\n",
	       proc_number("/proc/self/status", "VmStk: %ld kB") >= 8192 ? "yes" : "no");

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 2 * MB);
	if (pthread_create(&thread, &attr, thread_main, NULL)) {
		printf("pthread_create failed\n");
		return 1;
	}
	pthread_join(thread, &frames);
	printf("thread stack: %lu frames of 4 KB\n", (unsigned long)frames);

	interrupts_at_a_page_edge();
	return 0;
}
