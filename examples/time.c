/* Time: clock_gettime, nanosleep and gettimeofday. */
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static double seconds(struct timespec t)
{
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void)
{
	struct timespec start, end, prev, now, real, nap = { 0, 50 * 1000 * 1000 };
	struct timeval tv;
	int backwards = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	if (nanosleep(&nap, NULL))
		perror("nanosleep");
	clock_gettime(CLOCK_MONOTONIC, &end);
	printf("nanosleep(50 ms) slept at least 50 ms: %s\n",
	       seconds(end) - seconds(start) >= 0.05 ? "yes" : "no");

	prev = end;
	for (int i = 0; i < 10000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		backwards += seconds(now) < seconds(prev);
		prev = now;
	}
	printf("CLOCK_MONOTONIC went backwards %d times in 10000 reads\n", backwards);

	clock_gettime(CLOCK_REALTIME, &real);
	gettimeofday(&tv, NULL);
	printf("gettimeofday within 1 s of CLOCK_REALTIME: %s\n",
	       tv.tv_sec + tv.tv_usec / 1e6 - seconds(real) < 1.0 ? "yes" : "no");
	printf("the clock is past 2020: %s\n", real.tv_sec > 1577836800 ? "yes" : "no");
	return 0;
}
