/*
 * Debian's bpftrace, run by a controller (root, with CAP_SYS_MODULE: this
 * program's own child), counts this program's system calls with a kprobe
 * as it counts any process's: BPF reads a UKL program as it reads the
 * kernel.  Needs the host's /usr in the guest (Debian 12's is merged: its
 * /lib and /lib64 are links into /usr).
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CALLS 1000

/* A line from FD, read a byte at a time so that poll() sees what is left. */
static int read_line(int fd, char *line, size_t size)
{
	size_t n = 0;

	while (n + 1 < size && read(fd, line + n, 1) == 1)
		if (line[n++] == '\n')
			break;
	line[n] = 0;
	return n > 0;
}

int main(void)
{
	char script[256], line[256];
	int out[2], i, tries = 0;
	unsigned long count = 0;
	pid_t tracer;

	snprintf(script, sizeof(script),
		 "kprobe:__x64_sys_getppid /pid == %d/ { if (@armed) { @calls = count(); }"
		 " else { @armed = 1; printf(\"armed\\n\"); } }", (int)getpid());
	symlink("/usr/lib", "/lib");
	symlink("/usr/lib64", "/lib64");
	mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	if (pipe(out))
		return 1;
	fflush(stdout);
	tracer = fork();
	if (tracer == 0) {
		dup2(out[1], 1);
		close(out[0]);
		execl("/usr/bin/bpftrace", "bpftrace", "-B", "line", "-e", script, (char *)NULL);
		perror("exec bpftrace");
		_exit(127);
	}
	close(out[1]);
	/* The first call the probe sees arms it; each try waits 2 s for that. */
	do {
		if (tries++ == 150) {
			printf("bpftrace did not attach in 5 minutes\n");
			return 1;
		}
		if (tries % 10 == 0)
			fprintf(stderr, "bpftraced: no probe hit after %d s\n", 2 * tries);
		syscall(SYS_getppid);
		if (poll(&(struct pollfd){ .fd = out[0], .events = POLLIN }, 1, 2000) <= 0)
			continue;
		if (!read_line(out[0], line, sizeof(line))) {
			printf("bpftrace exited before its probe fired\n");
			return 1;
		}
	} while (strcmp(line, "armed\n"));
	for (i = 0; i < CALLS; i++)
		syscall(SYS_getppid);
	kill(tracer, SIGINT);
	while (read_line(out[0], line, sizeof(line)))
		if (!strncmp(line, "@calls: ", 8))
			count = strtoul(line + 8, NULL, 10);
	waitpid(tracer, NULL, 0);
	printf("bpftrace counted %lu of %d getppid() calls\n", count, CALLS);
	return 0;
}
