/*
 * The guest side of `ukl bench` for servers: for each TCP connection on PORT,
 * one line "<CLOCK_MONOTONIC ns> <idle ns> <interrupts> <context switches>
 * <softirqs> <MemAvailable kB> <processes forked since boot> <packets received
 * by busy polling>", then close.  Idle is the time
 * every CPU spent in the idle loop, from the kernel's NO_HZ accounting in
 * /proc/timer_list.  Under QEMU -icount shift=0 a busy guest nanosecond is one
 * guest instruction, but a halt inside a task is busy time too, so `ukl
 * bench` counts instructions with the QEMU plugins and keeps busy time only
 * as a cross-check.
 *
 * Each sample ends and begins a window of the QEMU plugins (bench/switches.c,
 * bench/profile.c): the marker NOPs are NOPs otherwise.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static unsigned long long idle_ns(void)
{
	FILE *f = fopen("/proc/timer_list", "r");
	char line[256];
	unsigned long long sum = 0, v;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " .idle_sleeptime : %llu", &v) == 1 ||
		    sscanf(line, " .iowait_sleeptime : %llu", &v) == 1)
			sum += v;
	fclose(f);
	return sum;
}

static unsigned long long mem_available_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* TcpExt BusyPollRxPackets: packets that a busy-polling thread received. */
static unsigned long long busy_poll_rx(void)
{
	FILE *f = fopen("/proc/net/netstat", "r");
	char names[4096], values[4096], *name, *value, *n_end, *v_end;
	unsigned long long n = 0;

	while (f && fgets(names, sizeof(names), f) && fgets(values, sizeof(values), f)) {
		if (strncmp(names, "TcpExt:", 7))
			continue;
		for (name = strtok_r(names, " \n", &n_end), value = strtok_r(values, " \n", &v_end);
		     name && value;
		     name = strtok_r(NULL, " \n", &n_end), value = strtok_r(NULL, " \n", &v_end))
			if (!strcmp(name, "BusyPollRxPackets"))
				n = strtoull(value, NULL, 10);
	}
	if (f)
		fclose(f);
	return n;
}

/* The first number after KEY on its /proc/stat line (intr, ctxt, softirq, processes). */
static unsigned long long stat_count(const char *key)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[1024];
	unsigned long long n = 0;
	size_t len = strlen(key);

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ' ') {
			n = strtoull(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	int port = argc > 1 ? atoi(argv[1]) : 9, one = 1;
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 4)) {
		perror("busy: listen");
		return 1;
	}
	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		struct timespec ts;
		char out[256];
		unsigned long long idle;

		if (fd < 0)
			continue;
		idle = idle_ns();
		asm volatile("nopl 0x554b4c02(%%rax)" ::: "memory");	/* at the clock read */
		asm volatile("nopl 0x554b4c01(%%rax)" ::: "memory");
		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(out, sizeof(out), "%llu %llu %llu %llu %llu %llu %llu %llu\n",
			 ts.tv_sec * 1000000000ULL + ts.tv_nsec, idle, stat_count("intr"),
			 stat_count("ctxt"), stat_count("softirq"), mem_available_kb(),
			 stat_count("processes"), busy_poll_rx());
		write(fd, out, strlen(out));
		close(fd);
	}
}
