/*
 * Stack growth: recursion grows the main stack by 8 MB and a thread's stack
 * by 1 MB, one untouched page at a time.  Under UKL each new page is a page
 * fault taken at CPL0 on the stack that is growing.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

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

static long vm_stack_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmStk: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static void *thread_main(void *arg)
{
	return (void *)grow(1 * MB);
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
	printf("main stack VMA is at least 8 MB: %s\n", vm_stack_kb() >= 8192 ? "yes" : "no");

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 2 * MB);
	if (pthread_create(&thread, &attr, thread_main, NULL)) {
		printf("pthread_create failed\n");
		return 1;
	}
	pthread_join(thread, &frames);
	printf("thread stack: %lu frames of 4 KB\n", (unsigned long)frames);
	return 0;
}
