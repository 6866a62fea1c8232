/*
 * kprobes and the kernel text a UKL program runs without a system call:
 * the kernel's vDSO clock reader, which the UKL C library calls for
 * clock_gettime().  That text runs in the program's context, on its stack,
 * where a probe's handler (a kretprobe's return hook, an emulated push or
 * an optimized probe's detour) cannot run, so a probe there is refused when
 * it is registered, as a probe on entry code is.  A probe on the system
 * call the program makes fires on each call, and the program goes on.
 *
 * "kprobe thunks" tries the kernel's return and indirect thunks instead,
 * which the program's returns and indirect calls reach on a kernel with
 * them (mitigations).
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

static const char *try(const char *probe)
{
	return put(TRACING "kprobe_events", probe) ? strerror(errno) : "registered";
}

static unsigned long hits(const char *event)
{
	char line[256], name[128];
	unsigned long n = 0, misses;
	FILE *f = fopen(TRACING "kprobe_profile", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lu %lu", name, &n, &misses) == 3 && !strcmp(name, event))
			break;
	if (f)
		fclose(f);
	return n;
}

static const char *const thunks[] = {
	"__x86_return_thunk", "srso_return_thunk", "srso_safe_ret",
	"srso_alias_return_thunk", "retbleed_return_thunk",
	"call_depth_return_thunk", "its_return_thunk",
	"__x86_indirect_thunk_rax", "__x86_indirect_its_thunk_rax",
};

int main(int argc, char **argv)
{
	struct timespec ts;
	char probe[128];
	unsigned int t;
	int i;

	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) && errno != EBUSY) {
		perror("mount tracefs");
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "thunks")) {
		for (t = 0; t < sizeof(thunks) / sizeof(thunks[0]); t++) {
			snprintf(probe, sizeof(probe), "p:ukl/t%u %s\n", t, thunks[t]);
			printf("kprobe on %s: %s\n", thunks[t], try(probe));
		}
		return 0;
	}
	printf("kprobe on the clock reader: %s\n",
	       try("p:ukl/clock __ukl_vdso_clock_gettime\n"));
	printf("kprobe inside it (optimizable): %s\n",
	       try("p:ukl/inside __ukl_vdso_clock_gettime+4\n"));
	printf("kretprobe on it: %s\n", try("r:ukl/ret __ukl_vdso_clock_gettime\n"));
	if (put(TRACING "kprobe_events", "p:ukl/ppid __x64_sys_getppid\n") ||
	    put(TRACING "events/ukl/enable", "1")) {
		printf("no probe on __x64_sys_getppid: %s\n", strerror(errno));
		return 1;
	}
	usleep(100000);			/* time for probes to be optimized */
	for (i = 0; i < CALLS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		getppid();
	}
	put(TRACING "events/ukl/enable", "0");
	printf("%d clock reads and getppid() calls: the getppid probe fired %s\n", CALLS,
	       hits("ukl/ppid") >= CALLS ? "on each" : "less often");
	return 0;
}
