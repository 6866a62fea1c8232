/*
 * Detached threads that end: musl frees a detached thread's stack from
 * that very stack (__unmapself: munmap, then exit, with no stack left in
 * between).  At CPL0 the two system calls must push nothing on it.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define THREADS 64

static int ended;

static void *work(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&ended, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

int main(void)
{
	pthread_attr_t attr;
	pthread_t t;
	int i;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t, &attr, work, NULL))
			return 1;
	while (__atomic_load_n(&ended, __ATOMIC_SEQ_CST) < THREADS)
		usleep(1000);
	usleep(100000);		/* the last ones are still unmapping */
	printf("%d detached threads ended\n", THREADS);
	return 0;
}
