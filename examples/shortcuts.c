/*
 * ukl_tcp_send(), ukl_tcp_sendmsg() and ukl_tcp_recv() against send(),
 * sendmsg() and recv(), on the same inputs: each case runs both ways and
 * prints the two results, which must be the same.  The send cases run again
 * with a one-iovec sendmsg().  Built for Linux (--baseline), the shortcuts
 * are the system calls.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <ukl/shortcut.h>

static volatile sig_atomic_t sigpipes, alarms;

static void on_signal(int sig)
{
	if (sig == SIGPIPE)
		sigpipes++;
	else
		alarms++;
}

/* A connected pair of TCP sockets on the loopback. */
static void tcp_pair(int fds[2])
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	bind(lfd, (struct sockaddr *)&addr, sizeof(addr));
	listen(lfd, 1);
	getsockname(lfd, (struct sockaddr *)&addr, &len);
	fds[0] = socket(AF_INET, SOCK_STREAM, 0);
	connect(fds[0], (struct sockaddr *)&addr, sizeof(addr));
	fds[1] = accept(lfd, NULL, NULL);
	close(lfd);
}

/* A call's result with its errno, taken at once: -errno for a failure. */
static long sample(long r)
{
	return r < 0 ? -errno : r;
}

static const char *result(long r)
{
	static const struct { int e; const char *name; } names[] = {
		{ EAGAIN, "EAGAIN" }, { EPIPE, "EPIPE" }, { EBADF, "EBADF" },
		{ EFAULT, "EFAULT" }, { EINTR, "EINTR" }, { ENOTCONN, "ENOTCONN" },
		{ ENOTSOCK, "ENOTSOCK" }, { EDESTADDRREQ, "EDESTADDRREQ" },
		{ ECONNRESET, "ECONNRESET" }, { EPERM, "EPERM" }, { ENOSYS, "ENOSYS" },
		{ EINVAL, "EINVAL" }, { EMSGSIZE, "EMSGSIZE" },
	};
	static char buf[2][32];
	static int which;

	which ^= 1;
	snprintf(buf[which], sizeof(buf[which]), "%ld", r);
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (r == -names[i].e)
			snprintf(buf[which], sizeof(buf[which]), "%s", names[i].name);
	return buf[which];
}

static void report(const char *what, const char *shortcut, const char *syscall)
{
	printf("%-44s %-14s %-14s %s\n", what, shortcut, syscall,
	       strcmp(shortcut, syscall) ? "DIFFERENT" : "same");
}

typedef long (*io_fn)(int fd, void *buf, size_t len, int flags);

static long do_send(int fd, void *buf, size_t len, int flags)
{
	return sample(send(fd, buf, len, flags));
}

static long do_recv(int fd, void *buf, size_t len, int flags)
{
	return sample(recv(fd, buf, len, flags));
}

static long sc_send(int fd, void *buf, size_t len, int flags)
{
	return sample(ukl_tcp_send(fd, buf, len, flags));
}

static long sc_recv(int fd, void *buf, size_t len, int flags)
{
	return sample(ukl_tcp_recv(fd, buf, len, flags));
}

/* send() as a sendmsg() of one iovec */
static struct msghdr one_iovec(struct iovec *iov, void *buf, size_t len)
{
	*iov = (struct iovec){ .iov_base = buf, .iov_len = len };
	return (struct msghdr){ .msg_iov = iov, .msg_iovlen = 1 };
}

static long sc_sendmsg1(int fd, void *buf, size_t len, int flags)
{
	struct iovec iov;
	struct msghdr m = one_iovec(&iov, buf, len);

	return sample(ukl_tcp_sendmsg(fd, &m, flags));
}

static long do_sendmsg1(int fd, void *buf, size_t len, int flags)
{
	struct iovec iov;
	struct msghdr m = one_iovec(&iov, buf, len);

	return sample(sendmsg(fd, &m, flags));
}

/* One case, run with the shortcut, then with the system call. */
static void both(const char *what, long (*run)(io_fn send_fn, io_fn recv_fn))
{
	char a[64], b[64];

	snprintf(a, sizeof(a), "%s", result(run(sc_send, sc_recv)));
	snprintf(b, sizeof(b), "%s", result(run(do_send, do_recv)));
	report(what, a, b);
}

/* A send case again, sending with sendmsg(). */
static void both_sendmsg(const char *what, long (*run)(io_fn send_fn, io_fn recv_fn))
{
	char a[64], b[64];

	snprintf(a, sizeof(a), "%s", result(run(sc_sendmsg1, sc_recv)));
	snprintf(b, sizeof(b), "%s", result(run(do_sendmsg1, do_recv)));
	report(what, a, b);
}

typedef long (*msg_fn)(int fd, const struct msghdr *msg, int flags);

static long sc_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return sample(ukl_tcp_sendmsg(fd, msg, flags));
}

static long do_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return sample(sendmsg(fd, msg, flags));
}

/* A sendmsg() case, with the shortcut, then with the system call. */
static void both_msg(const char *what, long (*run)(msg_fn send_fn))
{
	char a[64], b[64];

	snprintf(a, sizeof(a), "%s", result(run(sc_sendmsg)));
	snprintf(b, sizeof(b), "%s", result(run(do_sendmsg)));
	report(what, a, b);
}

static char big[1 << 20];

static long round_trip(io_fn s, io_fn r)
{
	int fds[2];
	char buf[16] = "";
	long n;

	tcp_pair(fds);
	s(fds[0], "hello", 5, 0);
	n = r(fds[1], buf, sizeof(buf), 0);
	close(fds[0]);
	close(fds[1]);
	return n == 5 && !memcmp(buf, "hello", 5) ? n : -2;
}

static long peek_then_read(io_fn s, io_fn r)
{
	int fds[2];
	char buf[16];
	long peeked, got;

	tcp_pair(fds);
	s(fds[0], "abcdef", 6, 0);
	usleep(10000);
	peeked = r(fds[1], buf, 3, MSG_PEEK);
	got = r(fds[1], buf, sizeof(buf), 0);
	close(fds[0]);
	close(fds[1]);
	return peeked * 100 + got;
}

static long recv_nonblocking_empty(io_fn s, io_fn r)
{
	int fds[2];
	char buf[16];
	long n;

	tcp_pair(fds);
	n = r(fds[1], buf, sizeof(buf), MSG_DONTWAIT);
	close(fds[0]);
	close(fds[1]);
	return n;
}

static long recv_o_nonblock_empty(io_fn s, io_fn r)
{
	int fds[2];
	char buf[16];
	long n;

	tcp_pair(fds);
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	n = r(fds[1], buf, sizeof(buf), 0);
	close(fds[0]);
	close(fds[1]);
	return n;
}

/* A non-blocking send into a full buffer: a partial count, then EAGAIN. */
static long send_until_full(io_fn s, io_fn r)
{
	int fds[2], size = 16384;
	long n, total = 0;

	tcp_pair(fds);
	setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	while ((n = s(fds[0], big, sizeof(big), 0)) > 0)
		total += n;
	printf("  (%s before %s)\n", total > 0 && total < (long)sizeof(big) ?
	       "a partial count" : "no partial count", result(n));
	close(fds[0]);
	close(fds[1]);
	return n;
}

/* After the peer closed: the first send draws a reset, the second reports
 * it, the third is EPIPE, with SIGPIPE unless MSG_NOSIGNAL. */
static long send_after_peer_closed(io_fn s, io_fn r, int flags)
{
	int fds[2];
	long n;

	tcp_pair(fds);
	close(fds[1]);
	usleep(20000);
	s(fds[0], "x", 1, flags);
	usleep(20000);
	sigpipes = 0;
	n = s(fds[0], "x", 1, flags);
	printf("  (second send %s, ", result(n));
	n = s(fds[0], "x", 1, flags);
	printf("%d SIGPIPE)\n", (int)sigpipes);
	close(fds[0]);
	return n;
}

static long epipe_sigpipe(io_fn s, io_fn r)
{
	return send_after_peer_closed(s, r, 0);
}

static long epipe_nosignal(io_fn s, io_fn r)
{
	return send_after_peer_closed(s, r, MSG_NOSIGNAL);
}

static long closed_fd(io_fn s, io_fn r)
{
	int fds[2];

	tcp_pair(fds);
	close(fds[0]);
	close(fds[1]);
	return s(fds[0], "x", 1, 0);
}

static long bad_buffer(io_fn s, io_fn r)
{
	int fds[2];
	long n;

	tcp_pair(fds);
	s(fds[0], "x", 1, 0);
	usleep(10000);
	n = r(fds[1], (void *)8, 16, MSG_DONTWAIT);	/* unmapped */
	close(fds[0]);
	close(fds[1]);
	return n;
}

static long bad_buffer_and_fd(io_fn s, io_fn r)
{
	/* A kernel address fails the buffer check, made before the fd's. */
	return s(-1, (void *)0xffff888000000000ul, 16, 0);
}

static long udp_socket(io_fn s, io_fn r)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	long n = s(fd, "x", 1, 0);		/* not connected: no address */

	close(fd);
	return n;
}

static long pipe_fd(io_fn s, io_fn r)
{
	int p[2];
	long n;

	pipe(p);
	n = s(p[1], "x", 1, 0);
	close(p[0]);
	close(p[1]);
	return n;
}

/* A blocking recv interrupted by a signal: EINTR, or restarted. */
static long interrupted_recv(io_fn r, int restart)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = restart ? SA_RESTART : 0 };
	struct itimerval t = { .it_value.tv_usec = 50000 };
	int fds[2];
	char buf[4];
	long n;

	sigaction(SIGALRM, &sa, NULL);
	tcp_pair(fds);
	alarms = 0;
	if (restart && fork() == 0) {			/* data after the signal */
		usleep(200000);
		send(fds[0], "late", 4, 0);
		_exit(0);
	}
	setitimer(ITIMER_REAL, &t, NULL);
	n = r(fds[1], buf, sizeof(buf), 0);
	printf("  (%d alarm(s) handled)\n", (int)alarms);
	close(fds[0]);
	close(fds[1]);
	if (restart)
		wait(NULL);
	return n;
}

static int forbid(long nr)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(insns) / sizeof(insns[0]), insns };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* A filter on the system call applies to the shortcut: a task with a
 * filter sends with the system call. */
static long seccomp_filter_on(io_fn s, long nr)
{
	int fds[2], status;
	pid_t pid;

	tcp_pair(fds);
	pid = fork();
	if (pid == 0) {
		long n = forbid(nr) ? -ENOSYS : s(fds[0], "x", 1, 0);

		_exit(n == -EPERM ? 1 : n == 1 ? 2 : 3);
	}
	waitpid(pid, &status, 0);
	close(fds[0]);
	close(fds[1]);
	return WEXITSTATUS(status) == 1 ? -EPERM : WEXITSTATUS(status) == 2 ? 1 : -ENOSYS;
}

/* A length of 2 GiB is capped as the system call caps it (MAX_RW_COUNT):
 * on an empty blocking socket, recv() waits (here until a signal). */
static long huge_recv(io_fn s, io_fn r)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct itimerval t = { .it_value.tv_usec = 50000 };
	size_t len = 1UL << 31;
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	int fds[2];
	long n;

	sigaction(SIGALRM, &sa, NULL);
	tcp_pair(fds);
	setitimer(ITIMER_REAL, &t, NULL);
	n = r(fds[1], buf, len, 0);
	close(fds[0]);
	close(fds[1]);
	munmap(buf, len);
	return n;
}

/* The system call that /proc/PID/syscall names for a task blocked in recv. */
static long blocked_recv_syscall(io_fn s, io_fn r)
{
	char path[64], line[256] = "";
	int fds[2], tries = 1000;
	long nr = -1;
	pid_t pid;
	FILE *f;

	tcp_pair(fds);
	pid = fork();
	if (pid == 0) {
		char buf[4];

		_exit(r(fds[1], buf, sizeof(buf), 0) == 4 ? 0 : 1);
	}
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	while (tries--) {
		usleep(1000);
		f = fopen(path, "r");
		/* "running" or "-1 ..." until the task blocks in the call */
		if (f && fgets(line, sizeof(line), f) && sscanf(line, "%ld", &nr) == 1 && nr >= 0) {
			fclose(f);
			break;
		}
		if (f)
			fclose(f);
	}
	send(fds[0], "done", 4, 0);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	close(fds[1]);
	return nr;
}

/* r9 after a send made with the raw system call convention (r8 NULL and r9
 * 5, the address and its length, which a send leaves alone): it is kept. */
static long raw_send(int fd, long nr)
{
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = 5;
	register long r10 __asm__("r10") = 0;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret), "+r"(r8), "+r"(r9)
			 : "0"(nr), "D"((long)fd), "S"("x"), "d"(1L), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret == 1 ? r9 : -ret;
}

static long sc_raw_send(int fd, void *buf, size_t len, int flags)
{
#ifdef __UKL__
	return raw_send(fd, 0x20000000);		/* UKL_SHORTCUT_TCP_SEND */
#else
	return raw_send(fd, SYS_sendto);
#endif
}

static long do_raw_send(int fd, void *buf, size_t len, int flags)
{
	return raw_send(fd, SYS_sendto);
}

static long registers_kept(io_fn s, io_fn r)
{
	int fds[2];
	long n;

	tcp_pair(fds);
	n = (s == sc_send ? sc_raw_send : do_raw_send)(fds[0], NULL, 0, 0);
	close(fds[0]);
	close(fds[1]);
	return n;
}

static long seccomp_sendto(io_fn s, io_fn r) { return seccomp_filter_on(s, SYS_sendto); }
static long seccomp_sendmsg(io_fn s, io_fn r) { return seccomp_filter_on(s, SYS_sendmsg); }

/* sendmsg() of MSG through a fresh pair; what the peer got, or the error */
static long sendmsg_case(msg_fn s, const struct msghdr *msg, int flags, const char *expect)
{
	int fds[2];
	char buf[32] = "";
	long n, got = 0;

	tcp_pair(fds);
	n = s(fds[0], msg, flags);
	if (n > 0)
		got = recv(fds[1], buf, sizeof(buf), MSG_DONTWAIT);
	close(fds[0]);
	close(fds[1]);
	return n > 0 && (got != n || memcmp(buf, expect, n)) ? -2 : n;
}

static long gather(msg_fn s)
{
	struct iovec iov[3] = { { "he", 2 }, { "", 0 }, { "llo", 3 } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 3 };

	return sendmsg_case(s, &m, 0, "hello");
}

static long bad_iovec(msg_fn s)
{
	struct msghdr m = { .msg_iov = (void *)8, .msg_iovlen = 1 };

	return sendmsg_case(s, &m, 0, "");
}

static long bad_iov_base(msg_fn s)
{
	struct iovec iov = { (void *)8, 4 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	return sendmsg_case(s, &m, 0, "");
}

static long too_many_iovecs(msg_fn s)
{
	static struct iovec iov[1025];
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 1025 };

	return sendmsg_case(s, &m, 0, "");
}

static long negative_length(msg_fn s)
{
	struct iovec iov = { "x", (size_t)-1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	return sendmsg_case(s, &m, 0, "");
}

static long compat_flag(msg_fn s)
{
	struct iovec iov = { "x", 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	/* MSG_CMSG_COMPAT, kernel-only: EINVAL, or ignored by a kernel without
	 * CONFIG_COMPAT (the guest's) */
	return sendmsg_case(s, &m, 0x80000000, "x");
}

/* An address on a connected TCP socket: TCP ignores it. */
static long with_address(msg_fn s)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct iovec iov = { "addr", 4 };
	struct msghdr m = { .msg_name = &to, .msg_namelen = sizeof(to),
			    .msg_iov = &iov, .msg_iovlen = 1 };

	return sendmsg_case(s, &m, 0, "addr");
}

/* Control data (a descriptor) on a TCP socket, which does not take it. */
static long with_control(msg_fn s)
{
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } ctl = { 0 };
	struct iovec iov = { "ctl", 3 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };

	ctl.h.cmsg_level = SOL_SOCKET;
	ctl.h.cmsg_type = SCM_RIGHTS;
	ctl.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&ctl.h), &(int){ 0 }, sizeof(int));
	return sendmsg_case(s, &m, 0, "ctl");
}

static long eintr(io_fn s, io_fn r) { return interrupted_recv(r, 0); }
static long restarted(io_fn s, io_fn r) { return interrupted_recv(r, 1); }

int main(void)
{
	signal(SIGPIPE, on_signal);
	printf("%-44s %-14s %-14s\n", "case", "shortcut", "system call");
	both("send and recv 5 bytes", round_trip);
	both("MSG_PEEK 3 then recv (peek*100+recv)", peek_then_read);
	both("recv MSG_DONTWAIT, nothing there", recv_nonblocking_empty);
	both("recv on O_NONBLOCK, nothing there", recv_o_nonblock_empty);
	both("send on O_NONBLOCK until full", send_until_full);
	both("send after the peer closed", epipe_sigpipe);
	both("send MSG_NOSIGNAL after the peer closed", epipe_nosignal);
	both("send on a closed fd", closed_fd);
	both("recv into a bad buffer", bad_buffer);
	both("send from a bad buffer on fd -1", bad_buffer_and_fd);
	both("send on an unconnected UDP socket", udp_socket);
	both("send on a pipe", pipe_fd);
	both("recv interrupted, no SA_RESTART", eintr);
	both("recv interrupted, SA_RESTART", restarted);
	both("send under a seccomp filter on sendto", seccomp_sendto);
	both("recv of 2 GiB, nothing there, interrupted", huge_recv);
	both("/proc/PID/syscall while blocked in recv", blocked_recv_syscall);
	both("r9 after a raw send with r9 = 5", registers_kept);
	both_sendmsg("sendmsg: send and recv 5 bytes", round_trip);
	both_sendmsg("sendmsg: on O_NONBLOCK until full", send_until_full);
	both_sendmsg("sendmsg: after the peer closed", epipe_sigpipe);
	both_sendmsg("sendmsg: MSG_NOSIGNAL after the peer closed", epipe_nosignal);
	both_sendmsg("sendmsg: on a closed fd", closed_fd);
	both_sendmsg("sendmsg: from a bad buffer on fd -1", bad_buffer_and_fd);
	both_sendmsg("sendmsg: on an unconnected UDP socket", udp_socket);
	both_sendmsg("sendmsg: on a pipe", pipe_fd);
	both_sendmsg("sendmsg: under a seccomp filter on sendmsg", seccomp_sendmsg);
	both_msg("sendmsg: three iovecs, one empty", gather);
	both_msg("sendmsg: a bad iovec array", bad_iovec);
	both_msg("sendmsg: a bad buffer in the iovec", bad_iov_base);
	both_msg("sendmsg: 1025 iovecs", too_many_iovecs);
	both_msg("sendmsg: an iovec of length -1", negative_length);
	both_msg("sendmsg: MSG_CMSG_COMPAT", compat_flag);
	both_msg("sendmsg: an address, connected TCP", with_address);
	both_msg("sendmsg: SCM_RIGHTS on TCP", with_control);
	return 0;
}
