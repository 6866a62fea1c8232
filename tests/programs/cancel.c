/*
 * pthread_cancel of threads blocked in cancellation points (read on a pipe,
 * nanosleep), and the same cancellable calls completing normally.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int pipe_fds[2];
static int cleanups;

static void cleanup(void *what)
{
	__atomic_add_fetch(&cleanups, 1, __ATOMIC_SEQ_CST);
}

static void *blocked_in_read(void *arg)
{
	char c;

	pthread_cleanup_push(cleanup, "read");
	read(pipe_fds[0], &c, 1);
	pthread_cleanup_pop(0);
	return "read returned";
}

static void *blocked_in_nanosleep(void *arg)
{
	struct timespec ten_s = { 10, 0 };

	pthread_cleanup_push(cleanup, "nanosleep");
	nanosleep(&ten_s, NULL);
	pthread_cleanup_pop(0);
	return "nanosleep returned";
}

static void *reader(void *arg)
{
	static char buf[8];
	ssize_t n = read(pipe_fds[0], buf, sizeof(buf) - 1);

	return n > 0 ? buf : "read failed";
}

static const char *cancel_after_a_while(void *(*fn)(void *))
{
	struct timespec tenth = { 0, 100 * 1000 * 1000 };
	pthread_t thread;
	void *result;

	pthread_create(&thread, NULL, fn, NULL);
	nanosleep(&tenth, NULL);	/* let it block */
	pthread_cancel(thread);
	pthread_join(thread, &result);
	return result == PTHREAD_CANCELED ? "cancelled" : (const char *)result;
}

int main(void)
{
	struct timespec short_nap = { 0, 1000 * 1000 };
	pthread_t thread;
	void *result;

	pipe(pipe_fds);
	printf("thread blocked in read: %s\n", cancel_after_a_while(blocked_in_read));
	printf("thread blocked in nanosleep: %s\n", cancel_after_a_while(blocked_in_nanosleep));
	printf("cleanup handlers run: %d\n", cleanups);

	pthread_create(&thread, NULL, reader, NULL);
	nanosleep(&short_nap, NULL);
	write(pipe_fds[1], "data", 4);
	pthread_join(thread, &result);
	printf("uncancelled read got: %s\n", (char *)result);
	printf("uncancelled nanosleep returned %d\n", nanosleep(&short_nap, NULL));
	return 0;
}
