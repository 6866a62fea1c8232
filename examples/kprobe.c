/*
 * A kprobe on kernel text that a UKL program calls without a system call:
 * the kernel's vDSO clock reader, which the UKL C library calls for
 * clock_gettime().  The probe must fire on every call, and the program
 * must go on, as it would for a probe on any kernel function.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#define TRACING "/sys/kernel/tracing/"
#define CALLS 1000

static int put(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_APPEND), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

int main(void)
{
	char line[256], name[128];
	unsigned long hits = 0, misses;
	struct timespec ts;
	FILE *f;
	int i;

	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) && errno != EBUSY) {
		perror("mount tracefs");
		return 1;
	}
	if (put(TRACING "kprobe_events", "p:ukl/clock __ukl_vdso_clock_gettime\n") ||
	    put(TRACING "events/ukl/clock/enable", "1")) {
		printf("no probe on __ukl_vdso_clock_gettime: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < CALLS; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	put(TRACING "events/ukl/clock/enable", "0");
	f = fopen(TRACING "kprobe_profile", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lu %lu", name, &hits, &misses) == 3 &&
		    !strcmp(name, "ukl/clock"))
			break;
	if (f)
		fclose(f);
	printf("%d clock reads, the probe fired %s, and the program went on\n", CALLS,
	       hits >= CALLS ? "on each" : "less often");
	return 0;
}
