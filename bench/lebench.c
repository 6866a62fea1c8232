/*
 * System-call and fault costs in the spirit of LEBench (the UKL paper's tool).
 *
 * Each operation runs in batches of `iters`, `samples` times; a sample is the
 * batch time divided by `iters`.  Under QEMU -icount shift=0 guest time is
 * guest instructions, so the numbers are instructions per operation.
 *
 * Output: one JSON object per line on stdout:
 *   {"op": "read", "size": 256, "samples": [...], "min": m, "median": d, "count": n}
 *
 * The fio_* operations are fio's QD1 latency test in miniature (paper section
 * 5.4): random 4 KiB reads or writes with O_DIRECT on /dev/vda.  fio itself
 * cannot be linked as a UKL program: it loads I/O engines with dlopen().
 *
 * Usage: lebench [--quick] [OP...]   (no OP: all; --list prints the names)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <ukl/shortcut.h>

#define MAX_SAMPLES 64
#define PAGE 4096
#define NFDS 10

static int quick;
static char buf[8192] __attribute__((aligned(PAGE)));

typedef void (*op_fn)(long arg, long iters);

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static void die(const char *what)
{
	fprintf(stderr, "lebench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Run fn(arg, iters) `samples` times and print one JSON line. */
static void measure(const char *op, long size, op_fn fn, long arg, long iters, int samples)
{
	long s[MAX_SAMPLES], sorted[MAX_SAMPLES];

	if (quick) {
		iters = iters / 10 ? iters / 10 : 1;
		samples = 3;
	}
	fn(arg, iters > 10 ? 10 : iters);		/* warm up, */
	now_ns();					/* the clock's first read too */
	/* Markers for the bench's QEMU plugin (bench/switches.c): a NOP anywhere else. */
	asm volatile("nopl 0x554b4c01(%%rax)" ::: "memory");
	for (int i = 0; i < samples; i++) {
		long t0 = now_ns();

		fn(arg, iters);
		s[i] = (now_ns() - t0) / iters;
	}
	asm volatile("nopl 0x554b4c02(%%rax)" ::: "memory");
	memcpy(sorted, s, sizeof(long) * samples);
	qsort(sorted, samples, sizeof(long), cmp_long);
	printf("{\"op\": \"%s\", \"size\": %ld, \"samples\": [", op, size);
	for (int i = 0; i < samples; i++)
		printf("%s%ld", i ? ", " : "", s[i]);
	printf("], \"min\": %ld, \"median\": %ld, \"count\": %ld}\n",
	       sorted[0], sorted[samples / 2], iters * samples);
	fflush(stdout);
}

static void op_getppid(long arg, long n)
{
	while (n--)
		getppid();
}

static void op_clock_gettime(long arg, long n)
{
	struct timespec ts;

	while (n--)
		clock_gettime(CLOCK_MONOTONIC, &ts);
}

static int zero_fd, null_fd;

static void op_read(long size, long n)
{
	while (n--)
		if (read(zero_fd, buf, size) != size)
			die("read");
}

static void op_write(long size, long n)
{
	while (n--)
		if (write(null_fd, buf, size) != size)
			die("write");
}

static int udp[2], tcp[2];

static void op_send_recv(int *pair, long size, long n)
{
	while (n--) {
		if (send(pair[0], buf, size, 0) != size)
			die("send");
		for (long got = 0; got < size;) {
			long r = recv(pair[1], buf, size - got, 0);

			if (r <= 0)
				die("recv");
			got += r;
		}
	}
}

static void op_udp(long size, long n)
{
	op_send_recv(udp, size, n);
}

static void op_tcp(long size, long n)
{
	op_send_recv(tcp, size, n);
}

/* One byte each way over TCP with write() and read(), as servers do. */
static void op_tcp_write(long size, long n)
{
	while (n--)
		if (write(tcp[0], buf, 1) != 1 || read(tcp[1], buf, 1) != 1)
			die("tcp_write");
}

/* The same with the UKL shortcuts (send() and recv() on Linux). */
static void op_tcp_shortcut(long size, long n)
{
	while (n--)
		if (ukl_tcp_send(tcp[0], buf, 1, 0) != 1 || ukl_tcp_recv(tcp[1], buf, 1, 0) != 1)
			die("tcp_shortcut");
}

/* One byte each way, sent with a one-iovec sendmsg(), as memcached replies */
static void op_tcp_sendmsg(long size, long n)
{
	struct iovec iov = { buf, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	while (n--)
		if (sendmsg(tcp[0], &m, 0) != 1 || read(tcp[1], buf, 1) != 1)
			die("tcp_sendmsg");
}

/* The same with the UKL shortcuts (sendmsg() and recv() on Linux). */
static void op_tcp_sendmsg_shortcut(long size, long n)
{
	struct iovec iov = { buf, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	while (n--)
		if (ukl_tcp_sendmsg(tcp[0], &m, 0) != 1 || ukl_tcp_recv(tcp[1], buf, 1, 0) != 1)
			die("tcp_sendmsg_shortcut");
}

static void loopback_pair(int type, int *pair)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int lst = socket(AF_INET, type, 0), one = 1;

	if (lst < 0 || bind(lst, (void *)&a, sizeof(a)) || getsockname(lst, (void *)&a, &len))
		die("socket");
	pair[0] = socket(AF_INET, type, 0);
	if (type == SOCK_STREAM) {
		if (listen(lst, 1) || connect(pair[0], (void *)&a, len))
			die("connect");
		pair[1] = accept(lst, NULL, NULL);
		close(lst);
		setsockopt(pair[0], IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
	} else {
		pair[1] = lst;
		if (connect(pair[0], (void *)&a, len))
			die("connect");
	}
}

static char *map_anon(long pages)
{
	char *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void op_page_fault(long pages, long n)
{
	while (n--) {
		char *p = map_anon(pages);

		for (long i = 0; i < pages; i++)
			p[i * PAGE] = 1;
		munmap(p, pages * PAGE);
	}
}

static void op_mmap_munmap(long pages, long n)
{
	while (n--)
		munmap(map_anon(pages), pages * PAGE);
}

static void *thread_body(void *arg)
{
	return arg;
}

static void op_thread_create(long arg, long n)
{
	pthread_t t;

	while (n--)
		if (pthread_create(&t, NULL, thread_body, NULL) || pthread_join(t, NULL))
			die("pthread_create");
}

static void op_fork(long arg, long n)
{
	while (n--) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0)
			_exit(0);
		waitpid(pid, NULL, 0);
	}
}

static int pipes[NFDS][2], epfd;

static void op_poll(long arg, long n)
{
	struct pollfd p[NFDS];

	for (int i = 0; i < NFDS; i++)
		p[i] = (struct pollfd){ .fd = pipes[i][0], .events = POLLIN };
	while (n--)
		poll(p, NFDS, 0);
}

static void op_select(long arg, long n)
{
	while (n--) {
		fd_set set;
		struct timeval tv = { 0, 0 };
		int max = 0;

		FD_ZERO(&set);
		for (int i = 0; i < NFDS; i++) {
			FD_SET(pipes[i][0], &set);
			max = pipes[i][0] > max ? pipes[i][0] : max;
		}
		select(max + 1, &set, NULL, NULL, &tv);
	}
}

static void op_epoll(long arg, long n)
{
	struct epoll_event ev[NFDS];

	while (n--)
		epoll_wait(epfd, ev, NFDS, 0);
}

static int ping[2], pong[2];

static void op_context_switch(long arg, long n)
{
	char c = 0;

	while (n--)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			die("ping-pong");
}

static void setup(void)
{
	memset(buf, 1, sizeof(buf));			/* pre-fault */
	zero_fd = open("/dev/zero", O_RDONLY);
	null_fd = open("/dev/null", O_WRONLY);
	if (zero_fd < 0 || null_fd < 0)
		die("open /dev/zero or /dev/null");
	loopback_pair(SOCK_DGRAM, udp);
	loopback_pair(SOCK_STREAM, tcp);
	epfd = epoll_create1(0);
	for (int i = 0; i < NFDS; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = i };

		if (pipe(pipes[i]) || epoll_ctl(epfd, EPOLL_CTL_ADD, pipes[i][0], &ev))
			die("pipe/epoll");
	}
}

/*
 * The echo side of the context-switch ping-pong, in a child process: this
 * program's fork, or with ORDINARY busybox's cat, an ordinary process even
 * beside a UKL program.
 */
static pid_t start_echo(int ordinary)
{
	char c;
	pid_t pid;

	if (pipe(ping) || pipe(pong))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(ping[1]);
		close(pong[0]);
		if (ordinary) {
			if (dup2(ping[0], 0) < 0 || dup2(pong[1], 1) < 0)
				_exit(1);
			execl("/bin/busybox", "cat", (char *)NULL);
			_exit(127);
		}
		while (read(ping[0], &c, 1) == 1 && write(pong[1], &c, 1) == 1)
			;
		_exit(0);
	}
	close(ping[0]);
	close(pong[1]);
	return pid;
}

static void sizes(const char *op, op_fn fn, long iters)
{
	measure(op, 1, fn, 1, iters, 15);
	for (long size = 256; size <= 8192; size += 256)
		measure(op, size, fn, size, iters, 15);
}

#define DISK "/dev/vda"
#define DISK_BLOCKS (64 * 1024 * 1024 / PAGE)

static unsigned long next_block(void)
{
	static unsigned long state = 12345;

	state = state * 6364136223846793005UL + 1442695040888963407UL;
	return (state >> 33) % DISK_BLOCKS;
}

/*
 * The buffer is mmapped: direct I/O pins user pages, and a UKL program's
 * static data lies in the kernel image, not in its address space's pages.
 */
static void op_fio(long write_op, long n)
{
	static int fd = -1;
	static char *io;

	if (fd < 0 && (fd = open(DISK, O_RDWR | O_DIRECT)) < 0)
		die("open " DISK);
	if (!io && (io = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)) == MAP_FAILED)
		die("mmap");
	for (long i = 0; i < n; i++) {
		off_t off = (off_t)next_block() * PAGE;
		ssize_t done = write_op ? pwrite(fd, io, PAGE, off) : pread(fd, io, PAGE, off);

		if (done != PAGE)
			die(write_op ? "pwrite" : "pread");
	}
}

static const char *const ops[] = {
	"getppid", "clock_gettime", "read", "write", "udp", "tcp", "tcp_write", "tcp_shortcut",
	"tcp_sendmsg", "tcp_sendmsg_shortcut", "page_fault",
	"mmap_munmap", "thread_create", "fork", "poll", "select", "epoll",
	"context_switch", "context_switch_ordinary", "fio_randread", "fio_randwrite", NULL
};

static void run(const char *op)
{
	if (!strcmp(op, "getppid"))
		measure(op, 0, op_getppid, 0, 1000, 15);
	else if (!strcmp(op, "clock_gettime"))
		measure(op, 0, op_clock_gettime, 0, 1000, 15);
	else if (!strcmp(op, "read"))
		sizes(op, op_read, 200);
	else if (!strcmp(op, "write"))
		sizes(op, op_write, 200);
	else if (!strcmp(op, "udp"))
		sizes(op, op_udp, 50);
	else if (!strcmp(op, "tcp"))
		sizes(op, op_tcp, 50);
	else if (!strcmp(op, "tcp_write"))
		measure(op, 1, op_tcp_write, 1, 500, 15);
	else if (!strcmp(op, "tcp_shortcut"))
		measure(op, 1, op_tcp_shortcut, 1, 500, 15);
	else if (!strcmp(op, "tcp_sendmsg"))
		measure(op, 1, op_tcp_sendmsg, 1, 500, 15);
	else if (!strcmp(op, "tcp_sendmsg_shortcut"))
		measure(op, 1, op_tcp_sendmsg_shortcut, 1, 500, 15);
	else if (!strcmp(op, "page_fault"))
		for (long pages = 1; pages <= 10; pages++)
			measure(op, pages, op_page_fault, pages, 50, 15);
	else if (!strcmp(op, "mmap_munmap"))
		measure(op, 1, op_mmap_munmap, 1, 200, 15);
	else if (!strcmp(op, "thread_create"))
		measure(op, 0, op_thread_create, 0, 20, 9);
	else if (!strcmp(op, "fork"))
		measure(op, 0, op_fork, 0, 10, 9);
	else if (!strcmp(op, "poll"))
		measure(op, NFDS, op_poll, 0, 500, 15);
	else if (!strcmp(op, "select"))
		measure(op, NFDS, op_select, 0, 500, 15);
	else if (!strcmp(op, "epoll"))
		measure(op, NFDS, op_epoll, 0, 500, 15);
	else if (!strcmp(op, "fio_randread"))
		measure(op, PAGE, op_fio, 0, 20, 15);
	else if (!strcmp(op, "fio_randwrite"))
		measure(op, PAGE, op_fio, 1, 20, 15);
	else if (!strcmp(op, "context_switch") || !strcmp(op, "context_switch_ordinary")) {
		pid_t echo = start_echo(!strcmp(op, "context_switch_ordinary"));

		measure(op, 0, op_context_switch, 0, 100, 15);
		close(ping[1]);
		waitpid(echo, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	int first = 1, chosen = 0;

	if (argc > 1 && !strcmp(argv[1], "--list")) {
		for (int i = 0; ops[i]; i++)
			puts(ops[i]);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--quick")) {
		quick = 1;
		first = 2;
	}
	for (int i = first; i < argc; i++) {
		int known = 0;

		for (int j = 0; ops[j]; j++)
			known |= !strcmp(argv[i], ops[j]);
		if (!known) {
			fprintf(stderr, "lebench: unknown operation %s\n", argv[i]);
			return 2;
		}
	}
	setup();
	for (int i = 0; ops[i]; i++) {
		for (int j = first; j < argc; j++)
			chosen |= !strcmp(argv[j], ops[i]);
		if (argc == first || chosen)
			run(ops[i]);
		chosen = 0;
	}
	return 0;
}
