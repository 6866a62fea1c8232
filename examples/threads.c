/*
 * Eight threads: TLS with initialisers, mutex, condition variable, barrier,
 * thread-specific data with a destructor, pthread_exit and join.  Also a
 * shared (non-private) futex on a global, which musl uses internally.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREADS 8
#define ROUNDS 10000

static __thread int tls_number = 1000;
static __thread char tls_name[16] = "unnamed";
static __thread long tls_zero;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_ready = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t barrier;
static pthread_key_t key;
static long counter;
static int ready, tls_ok, destructed, futex_word;

static void destructor(void *value)
{
	pthread_mutex_lock(&lock);
	destructed += (int)(long)value;
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	int initial_ok = tls_number == 1000 && !strcmp(tls_name, "unnamed") && tls_zero == 0;

	tls_number = id;
	snprintf(tls_name, sizeof(tls_name), "thread-%d", id);
	tls_zero = id * 3;
	pthread_setspecific(key, (void *)1L);

	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}

	pthread_mutex_lock(&lock);
	ready++;
	pthread_cond_signal(&all_ready);
	pthread_mutex_unlock(&lock);

	pthread_barrier_wait(&barrier);	/* every thread has written its TLS */

	char expect[16];
	snprintf(expect, sizeof(expect), "thread-%d", id);
	if (initial_ok && tls_number == id && !strcmp(tls_name, expect) && tls_zero == id * 3) {
		pthread_mutex_lock(&lock);
		tls_ok++;
		pthread_mutex_unlock(&lock);
	}
	pthread_exit((void *)(long)(id * 10));
}

int main(void)
{
	pthread_t threads[THREADS];
	long sum = 0;

	pthread_barrier_init(&barrier, NULL, THREADS);
	pthread_key_create(&key, destructor);
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&threads[i], NULL, worker, (void *)i)) {
			printf("pthread_create failed\n");
			return 1;
		}

	pthread_mutex_lock(&lock);
	while (ready < THREADS)
		pthread_cond_wait(&all_ready, &lock);
	pthread_mutex_unlock(&lock);
	printf("condvar: all %d threads ready\n", ready);

	for (int i = 0; i < THREADS; i++) {
		void *value;

		pthread_join(threads[i], &value);
		sum += (long)value;
	}
	printf("mutex: counter %ld (expected %d)\n", counter, THREADS * ROUNDS);
	printf("pthread_exit values sum %ld (expected %d)\n", sum, 10 * (0 + 7) * 8 / 2);
	printf("TLS initialisers and private copies correct in %d of %d threads\n", tls_ok, THREADS);
	printf("TSD destructors ran %d times\n", destructed);
	printf("main thread TLS untouched: %d %s %ld\n", tls_number, tls_name, tls_zero);
	/* FUTEX_WAKE (1) without FUTEX_PRIVATE_FLAG: no waiters, so 0 woken */
	printf("shared futex on a global: %s\n",
	       syscall(SYS_futex, &futex_word, 1, 1, 0, 0, 0) == 0 ? "ok" : strerror(errno));
	return 0;
}
