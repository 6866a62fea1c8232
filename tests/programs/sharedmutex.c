/*
 * A process-shared mutex in MAP_SHARED memory, reached through a pointer in
 * static data, contended across fork by two threads in each process, while
 * those threads also contend musl's own locks (malloc, stdio) in their
 * process.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 2
#define ROUNDS 5000

struct shared {
	pthread_mutex_t lock;
	long counter;
};

static struct shared *shared;
static FILE *sink;

static void *work(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&shared->lock);
		shared->counter++;
		pthread_mutex_unlock(&shared->lock);
		free(malloc(32 + i % 256));
		if (i % 64 == 0)
			fprintf(sink, "%d", i);
	}
	return arg;
}

static int run_threads(void)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, work, NULL))
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(void)
{
	pthread_mutexattr_t attr;
	int status;
	pid_t pid;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sink = fopen("/dev/null", "w");
	if (shared == MAP_FAILED || !sink)
		return 1;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&shared->lock, &attr);

	pid = fork();
	if (pid < 0)
		return 1;
	if (run_threads())
		return 1;
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	printf("shared mutex: counter %ld (expected %d)\n", shared->counter,
	       2 * THREADS * ROUNDS);
	return 0;
}
