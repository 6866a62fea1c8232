/*
 * A system-call fuzzer that runs as the program itself (`ukl fuzz`).
 * Dropped to nobody, it makes random calls from a fixed list.  A pointer
 * argument is NULL, a writable buffer, one that ends at a guard page,
 * read-only data, the program's own text, unmapped user memory, a kernel
 * address or a non-canonical one; the same goes for the pointers inside an
 * iovec array or a msghdr.  The same seed makes the same calls on any
 * kernel, so a UKL run must print what Linux prints.
 *
 *   fuzz SEED CALLS [FIRST]   CALLS calls: per system call, how many
 *                             succeeded and how many failed with each
 *                             errno, a checkpoint hash every 10000 calls,
 *                             and one line per call from call FIRST on,
 *                             with its arguments after a "|"
 *   fuzz SEED -t SECONDS      as many calls as fit in SECONDS
 *
 * Only success or the errno is compared: values such as times, addresses
 * and fd numbers differ from boot to boot.  No call may block or signal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define CHECKPOINT 10000
#define NOBODY 65534

/* 8 KiB of text whose bytes are the same in every build of this file */
asm(".pushsection .text.fuzz_text, \"ax\"\n"
    ".p2align 12\n"
    "fuzz_text:\n"
    ".fill 8192, 1, 0x11\n"
    ".popsection");
extern const unsigned char fuzz_text[];
static const unsigned char rodata[8192] __attribute__((aligned(PAGE))) = { [0 ... 8191] = 0x22 };

/*
 * 2 writable pages, then a guard page.  The second holds the iovec arrays
 * and msghdrs, whose pointers differ from run to run: no pointer into the
 * first page reaches them within 256 bytes.
 */
static unsigned char *buf, *edge;
static int fds[8];

static unsigned long long state;

static unsigned long long next(void)	/* splitmix64 */
{
	unsigned long long z = (state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#define PICK(array) (array)[next() % (sizeof(array) / sizeof((array)[0]))]

static const unsigned long kernel_addresses[] = {
	0xffffffff81000000UL,	/* kernel text */
	0xffff888000000000UL,	/* the direct map */
	0xfffffe0000000000UL,	/* the CPU entry area */
	0xffffffffff600000UL,	/* the vsyscall page */
};
static const unsigned long odd_addresses[] = {
	0x10000UL,		/* unmapped user memory */
	0x7ffffffff000UL,	/* the last user page */
	0x800000000000UL,	/* the first non-canonical address */
	0x8000000000000000UL,
};

/* A pointer whose target holds nothing that can make a call block. */
static unsigned long safe_pointer(void)
{
	switch (next() % 4) {
	case 0: return (unsigned long)buf;
	case 1: return (unsigned long)edge;
	case 2: return PICK(kernel_addresses);
	default: return PICK(odd_addresses);
	}
}

static unsigned long pointer(void)
{
	switch (next() % 8) {
	case 0: return 0;
	/* Not within 256 bytes of their ends: what lies beyond is the link's */
	case 1: return (unsigned long)fuzz_text + next() % (8192 - 256);
	case 2: return (unsigned long)rodata + next() % (8192 - 256);
	case 3: return (unsigned long)buf + next() % (PAGE - 256);
	default: return safe_pointer();
	}
}

static unsigned long length(void)
{
	static const unsigned long lengths[] = {
		0, 1, 15, 16, 64, 4096, 8192, 65536, 0x7ffff000, -1UL,
	};
	return PICK(lengths);
}

static unsigned long integer(void)
{
	static const unsigned long values[] = {
		0, 1, 2, 3, 7, 16, 64, 4096, -1UL, -4096UL, 0x7fffffff, 0x80000000,
	};
	return next() % 4 ? PICK(values) : (unsigned int)next();
}

static const char *const paths[] = {
	"/", "/tmp/fuzz/file", "/tmp/fuzz", "/proc/self/status", "/proc/self/exe",
	"/nonexistent", "", "/tmp/fuzz/file/x", "/proc/self/mem",
};

static unsigned long path(void)
{
	return next() % 3 ? (unsigned long)PICK(paths) : pointer();
}

/* An iovec array whose entries point anywhere, or a pointer that is not one */
static unsigned long iovecs(void)
{
	struct iovec *iov = (struct iovec *)(buf + PAGE + 2048);

	if (next() % 4 == 0)
		return pointer();
	for (int i = 0; i < 4; i++) {
		iov[i].iov_base = (void *)pointer();
		iov[i].iov_len = next() % 2 ? 16 : length();
	}
	return (unsigned long)iov;
}

static unsigned long message(void)
{
	struct msghdr *msg = (struct msghdr *)(buf + PAGE + 2560);

	if (next() % 4 == 0)
		return pointer();
	memset(msg, 0, sizeof(*msg));
	msg->msg_name = next() % 2 ? NULL : (void *)pointer();
	msg->msg_namelen = next() % 2 ? sizeof(struct sockaddr_in) : integer();
	msg->msg_iov = (struct iovec *)iovecs();
	msg->msg_iovlen = next() % 5;
	msg->msg_control = next() % 2 ? NULL : (void *)pointer();
	msg->msg_controllen = next() % 2 ? 0 : length();
	return (unsigned long)msg;
}

/*
 * Argument kinds: p pointer, t pointer to a timeout (never NULL; zeros
 * where it is valid), s path, f fd, l length, i integer, n count 0-4, v iovec array,
 * m msghdr, a AT_FDCWD, 0 zero, 8 the signal set size, D MSG_DONTWAIT,
 * G GRND_INSECURE, F F_GETFL or F_GETLK, I FIONREAD or TCGETS, u a futex
 * wake or a wait, M MADV_NORMAL or MADV_WILLNEED, x a fd for dup3, S the
 * program's pid, P a prctl that reads or names, A an arch_prctl that reads.
 */
struct call {
	const char *name;
	long nr;
	const char *kinds;
};

static const struct call calls[] = {
	{ "read", SYS_read, "fpl" },
	{ "write", SYS_write, "fpl" },
	{ "pread64", SYS_pread64, "fpli" },
	{ "pwrite64", SYS_pwrite64, "fpli" },
	{ "readv", SYS_readv, "fvn" },
	{ "writev", SYS_writev, "fvn" },
	{ "preadv", SYS_preadv, "fvni" },
	{ "lseek", SYS_lseek, "fin" },
	{ "fstat", SYS_fstat, "fp" },
	{ "newfstatat", SYS_newfstatat, "aspn" },
	{ "statx", SYS_statx, "asnip" },
	{ "openat", SYS_openat, "asn" },
	{ "readlinkat", SYS_readlinkat, "aspl" },
	{ "faccessat", SYS_faccessat, "asn" },
	{ "getxattr", SYS_getxattr, "sspl" },
	{ "listxattr", SYS_listxattr, "spl" },
	{ "getdents64", SYS_getdents64, "fpl" },
	{ "getcwd", SYS_getcwd, "pl" },
	{ "uname", SYS_uname, "p" },
	{ "sysinfo", SYS_sysinfo, "p" },
	{ "times", SYS_times, "p" },
	{ "getrusage", SYS_getrusage, "np" },
	{ "getrlimit", SYS_getrlimit, "ip" },
	{ "prlimit64", SYS_prlimit64, "0n0p" },
	{ "clock_gettime", SYS_clock_gettime, "np" },
	{ "clock_getres", SYS_clock_getres, "np" },
	{ "gettimeofday", SYS_gettimeofday, "pp" },
	{ "nanosleep", SYS_nanosleep, "tp" },
	{ "rt_sigprocmask", SYS_rt_sigprocmask, "npp8" },
	{ "rt_sigpending", SYS_rt_sigpending, "p8" },
	{ "rt_sigaction", SYS_rt_sigaction, "i0p8" },
	{ "sigaltstack", SYS_sigaltstack, "0p" },
	{ "sched_getaffinity", SYS_sched_getaffinity, "0lp" },
	{ "sched_getparam", SYS_sched_getparam, "0p" },
	{ "poll", SYS_poll, "pn0" },
	{ "ppoll", SYS_ppoll, "pnt08" },
	{ "select", SYS_select, "ipppt" },
	{ "pipe2", SYS_pipe2, "pi" },
	{ "socketpair", SYS_socketpair, "i00p" },
	{ "getsockname", SYS_getsockname, "fpp" },
	{ "getpeername", SYS_getpeername, "fpp" },
	{ "getsockopt", SYS_getsockopt, "fiipp" },
	{ "recvfrom", SYS_recvfrom, "fplDpp" },
	{ "sendmsg", SYS_sendmsg, "fmD" },
	{ "recvmsg", SYS_recvmsg, "fmD" },
	{ "getrandom", SYS_getrandom, "plG" },
	{ "mincore", SYS_mincore, "plp" },
	{ "madvise", SYS_madvise, "plM" },
	{ "msync", SYS_msync, "pl0" },
	{ "fcntl", SYS_fcntl, "fFp" },
	{ "ioctl", SYS_ioctl, "fIp" },
	{ "futex", SYS_futex, "puit" },
	{ "capget", SYS_capget, "pp" },
	{ "prctl", SYS_prctl, "Pp" },
	{ "arch_prctl", SYS_arch_prctl, "Ap" },
	{ "get_robust_list", SYS_get_robust_list, "0pp" },
	{ "process_vm_readv", SYS_process_vm_readv, "Svnvn0" },
	{ "dup3", SYS_dup3, "fx0" },
	{ "ftruncate", SYS_ftruncate, "fi" },
	{ "memfd_create", SYS_memfd_create, "s0" },
};

static unsigned long argument(char kind)
{
	switch (kind) {
	case 'p': return pointer();
	case 't': return safe_pointer();
	case 's': return path();
	case 'f': return fds[next() % 8];
	case 'l': return length();
	case 'i': return integer();
	case 'n': return next() % 5;
	case 'v': return iovecs();
	case 'm': return message();
	case 'a': return AT_FDCWD;
	case '8': return 8;
	case 'D': return MSG_DONTWAIT;
	case 'G': return 0x0004;	/* GRND_INSECURE: never blocks, never EAGAIN */
	case 'F': return next() % 2 ? F_GETFL : F_GETLK;
	case 'I': return next() % 2 ? 0x541B /* FIONREAD */ : 0x5401 /* TCGETS */;
	case 'u': return next() % 2 ? FUTEX_WAKE_PRIVATE : FUTEX_WAIT_PRIVATE;
	case 'M': return next() % 2 ? MADV_NORMAL : MADV_WILLNEED;
	case 'x': return 10 + next() % 10;
	case 'S': return getpid();
	case 'P': {
		/* PR_GET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_NAME, PR_GET_NAME,
		 * PR_GET_CHILD_SUBREAPER, PR_GET_TID_ADDRESS */
		static const int options[] = { 2, 3, 15, 16, 37, 40 };
		return PICK(options);
	}
	case 'A': {
		static const int codes[] = { 0x1003, 0x1004, 0x1011 };	/* ARCH_GET_FS, _GS, _CPUID */
		return PICK(codes);
	}
	default: return 0;
	}
}

#define MAX_ERRNO 134
static unsigned long counts[sizeof(calls) / sizeof(calls[0])][MAX_ERRNO + 1];

static unsigned long long hash = 0xcbf29ce484222325ULL;

static void mix(unsigned long long v)	/* FNV-1a */
{
	for (int i = 0; i < 8; i++, v >>= 8)
		hash = (hash ^ (v & 0xff)) * 0x100000001b3ULL;
}

static void one_call(unsigned long i, unsigned long first)
{
	unsigned int c = next() % (sizeof(calls) / sizeof(calls[0]));
	unsigned long a[6] = { 0 };
	long ret;
	int err;

	/* What earlier calls left in the buffer (times, random bytes) differs from run to run */
	memset(buf, 0, 2 * PAGE);
	for (int k = 0; calls[c].kinds[k]; k++)
		a[k] = argument(calls[c].kinds[k]);
	errno = 0;
	ret = syscall(calls[c].nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	err = ret == -1 ? errno : 0;
	if (err > MAX_ERRNO)
		err = MAX_ERRNO;
	counts[c][err]++;
	mix(i << 16 | c << 8 | err);
	if (i >= first)
		printf("call %lu %s %s | %lx %lx %lx %lx %lx %lx\n", i, calls[c].name,
		       err ? strerror(err) : "ok", a[0], a[1], a[2], a[3], a[4], a[5]);
	/* Close what the call may have opened: fds 3-9 and 10-19 are spare. */
	syscall(SYS_close_range, 3, 19, 0);
	if (i % CHECKPOINT == CHECKPOINT - 1)
		printf("checkpoint %lu %016llx\n", i + 1, hash);
}

static void setup(void)
{
	int pipefd[2];

	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	mkdir("/tmp", 01777);
	mkdir("/tmp/fuzz", 0755);
	close(open("/tmp/fuzz/a", O_CREAT | O_WRONLY, 0644));
	buf = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || mprotect(buf + 2 * PAGE, PAGE, PROT_NONE) ||
	    pipe2(pipefd, O_NONBLOCK))
		exit(2);
	edge = buf + 2 * PAGE - 16;
	/* fds 20-25, opened as root; then 100 (closed), -1 */
	dup2(open("/dev/null", O_RDWR), 20);
	dup2(pipefd[0], 21);
	dup2(pipefd[1], 22);
	dup2(open("/tmp/fuzz/file", O_CREAT | O_RDWR, 0644), 23);
	dup2(open("/tmp/fuzz", O_RDONLY | O_DIRECTORY), 24);
	dup2(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0), 25);
	syscall(SYS_close_range, 3, 19, 0);
	int want[8] = { 20, 21, 22, 23, 24, 25, 100, -1 };
	memcpy(fds, want, sizeof(fds));
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long n, i, first = -1UL;
	double stop = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: fuzz SEED CALLS [FIRST] | fuzz SEED -t SECONDS\n");
		return 2;
	}
	state = strtoull(argv[1], NULL, 0);
	if (!strcmp(argv[2], "-t") && argc > 3) {
		n = -1UL;
		stop = now() + atof(argv[3]);
	} else {
		n = strtoul(argv[2], NULL, 0);
		if (argc > 3)
			first = strtoul(argv[3], NULL, 0);
	}
	setup();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed %s uid %d\n", argv[1], (int)getuid());
	for (i = 0; i < n; i++) {
		if (stop && i % 1000 == 0 && now() > stop)
			break;
		one_call(i, first);
	}
	for (unsigned int c = 0; c < sizeof(calls) / sizeof(calls[0]); c++) {
		printf("%s:", calls[c].name);
		for (int e = 0; e <= MAX_ERRNO; e++)
			if (counts[c][e])
				printf(" %s %lu", e ? strerror(e) : "ok", counts[c][e]);
		printf("\n");
	}
	printf("calls %lu hash %016llx\n", i, hash);
	return 0;
}
