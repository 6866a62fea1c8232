/*
 * ukl-intruder: an ordinary process (built for Linux, running at CPL3) that
 * tries to write a word into another process, as a second user in the
 * guest would.  It tries every thread of the target, since a check made
 * per thread can miss threads that share the memory (io_uring workers),
 * and three ways for each: /proc/PID/task/TID/mem, process_vm_writev() and
 * PTRACE_SEIZE.
 *
 *   ukl-intruder PID ADDR VALUE [nomodule]
 *
 * One line per thread and way, "<comm> <way>: <result>"; a comm such as
 * iou-sqp-42 loses its "-42", so that the output does not depend on pids.
 * With "nomodule", CAP_SYS_MODULE is dropped first, as in a container
 * started with --cap-add SYS_ADMIN.
 *
 *   ukl-intruder trace PID
 *
 * As root without CAP_SYS_ADMIN (CAP_SYS_PTRACE is enough to attach to
 * anyone), attach to PID before it executes a UKL program, and say whether
 * the tracer still holds it afterwards.
 *
 *   ukl-intruder race
 *
 * Read pids from stdin, one per exec of a UKL program by a uid that is
 * this one's, and try PTRACE_SEIZE on each until it succeeds or the
 * process has gone; count the seizes that caught a UKL program.
 *
 *   ukl-intruder exec traced|keepcaps PATH ARG...
 *
 * The ordinary launcher of those two: wait until traced, or drop to uid
 * 1000 keeping CAP_SYS_ADMIN (KEEPCAPS), then execute PATH.
 *
 *   ukl-intruder parent nobody|nomodule|root|early PATH ADDR VALUE
 *
 * A parent that a program asks to trace it: fork, become nobody or drop
 * CAP_SYS_MODULE (or stay root), then let the child execute "PATH traced",
 * which calls PTRACE_TRACEME and stops; write VALUE at ADDR in it.  With
 * "early" the child, still root, calls PTRACE_TRACEME itself before it
 * executes "PATH report", and the parent is nobody.
 *
 *   ukl-intruder listener PATH
 *
 * Hand getppid() to a seccomp listener, then execute "PATH listened" in a
 * child and answer its getppid() with 4242.
 *
 *   ukl-intruder share path|sysv|keep|hold|pin|truncate TARGET VALUE nobody|nomodule|root
 *
 * Become nobody or drop CAP_SYS_MODULE (or stay root), then write VALUE
 * into the first word of a shared page: the file at TARGET opened and
 * mapped ("open: ", "mmap: "), or the SysV segment TARGET ("shmat: ").
 * With "keep", create the file TARGET (mode 0666), map it, write VALUE,
 * create TARGET.ready and wait to be killed, keeping the mapping.  With
 * "hold", the same, but write VALUE with pwrite() and map nothing.
 *
 * With "pin", create TARGET the same way, map it and register the page as
 * an io_uring fixed buffer, then unmap and close it, keeping only the pin;
 * create TARGET.ready, and at SIGUSR1 write VALUE through the pin
 * (IORING_OP_READ_FIXED) and exit.  With "truncate", zero TARGET with
 * open(O_RDONLY | O_TRUNC) ("O_TRUNC: ") and with truncate() ("truncate: "),
 * then give it its length back.
 *
 *   ukl-intruder perf PID SECRET
 *
 * As uid 1000 with CAP_PERFMON alone, sample PID's r12 for a second and
 * count the samples that hold SECRET.
 *
 *   ukl-intruder bpf PID VALUE
 *
 * With CAP_BPF and CAP_PERFMON only, attach a kprobe program to
 * __x64_sys_getppid that makes PID's getppid() return VALUE
 * (bpf_override_return()), say whether it loaded and attached, and keep it
 * for two seconds.
 *
 *   ukl-intruder spin
 *
 * As uid 1000, read /dev/zero for four seconds: a process that is
 * interrupted in the kernel again and again.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <asm/perf_regs.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *result(int failed)
{
	return failed ? strerror(errno) : "ok";
}

static void comm_of(const char *pid, const char *tid, char *comm, size_t len)
{
	char path[320];
	FILE *f;
	char *end;

	snprintf(path, sizeof(path), "/proc/%s/task/%s/comm", pid, tid);
	f = fopen(path, "r");
	if (!f || !fgets(comm, len, f))
		snprintf(comm, len, "?");
	if (f)
		fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	end = strrchr(comm, '-');
	if (end && end[1] && strspn(end + 1, "0123456789") == strlen(end + 1))
		*end = 0;
}

static int write_mem(const char *pid, const char *tid, unsigned long addr, unsigned long value)
{
	char path[320];
	int fd, failed;

	snprintf(path, sizeof(path), "/proc/%s/task/%s/mem", pid, tid);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	failed = pwrite(fd, &value, sizeof(value), addr) != sizeof(value);
	close(fd);
	return failed ? -1 : 0;
}

static int write_vm(const char *tid, unsigned long addr, unsigned long value)
{
	struct iovec local = { &value, sizeof(value) };
	struct iovec remote = { (void *)addr, sizeof(value) };

	return process_vm_writev(atoi(tid), &local, 1, &remote, 1, 0) == sizeof(value) ? 0 : -1;
}

static int seize(const char *tid)
{
	pid_t t = atoi(tid);

	if (ptrace(PTRACE_SEIZE, t, NULL, NULL))
		return -1;
	ptrace(PTRACE_DETACH, t, NULL, NULL);
	return 0;
}

/* Raise CAP in the effective set, or drop it from every set. */
static int set_cap(int cap, int raise)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2], *d = &data[cap / 32];
	unsigned int bit = 1u << cap % 32;

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	if (raise) {
		d->effective |= bit;
	} else {
		d->effective &= ~bit;
		d->permitted &= ~bit;
		d->inheritable &= ~bit;
	}
	return syscall(SYS_capset, &hdr, data);
}

static int traced(void)
{
	char line[128];
	FILE *f;
	int pid = 0;

	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &pid) == 1)
			break;
	if (f)
		fclose(f);
	return pid != 0;
}

static int drop(const char *how)
{
	if (!strcmp(how, "nobody") || !strcmp(how, "early"))
		return setgid(65534) || setuid(65534) ? -1 : 0;
	if (!strcmp(how, "nomodule"))
		return set_cap(CAP_SYS_MODULE, 0);
	return 0;
}

static int parent(const char *how, const char *path, unsigned long addr, unsigned long value)
{
	int go[2], ready[2], status;
	pid_t child;
	char c = 0;

	if (pipe(go) || pipe(ready))
		return 1;
	fflush(stdout);
	child = fork();
	if (child == 0) {
		int early = !strcmp(how, "early");

		close(go[1]);
		/* While the parent is still root, as commoncap wants. */
		if (early && ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
			perror("PTRACE_TRACEME before the exec");
			_exit(1);
		}
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		if (read(go[0], &c, 1) == 1)
			execl(path, path, early ? "report" : "traced", (char *)NULL);
		printf("exec under a tracer that is nobody: %s\n", strerror(errno));
		fflush(stdout);
		_exit(127);
	}
	close(go[0]);
	if (read(ready[0], &c, 1) != 1)
		return 1;
	if (drop(how)) {
		perror(how);
		return 1;
	}
	if (write(go[1], &c, 1) != 1)
		return 1;
	while (waitpid(child, &status, 0) == child && WIFSTOPPED(status)) {
		printf("PTRACE_POKEDATA: %s\n",
		       result(ptrace(PTRACE_POKEDATA, child, (void *)addr, (void *)value)));
		fflush(stdout);
		ptrace(PTRACE_CONT, child, NULL, NULL);
	}
	return 0;
}

static int listener(const char *path)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(insns) / sizeof(insns[0]), insns };
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	struct pollfd pfd;
	int fd, status;
	pid_t child;

	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0) {
		perror("seccomp listener");
		return 1;
	}
	fflush(stdout);
	child = fork();
	if (child == 0) {
		execl(path, path, "listened", (char *)NULL);
		printf("exec under a seccomp listener: %s\n", strerror(errno));
		fflush(stdout);
		_exit(127);
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (waitpid(child, &status, WNOHANG) == 0) {
		if (poll(&pfd, 1, 100) <= 0 || !(pfd.revents & POLLIN))
			continue;
		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req))
			continue;
		resp = (struct seccomp_notif_resp){ .id = req.id, .val = 4242 };
		ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	return 0;
}

/* Create TARGET.ready, for the program that waits for it. */
static void say_ready(const char *target)
{
	char ready[320];

	snprintf(ready, sizeof(ready), "%s.ready", target);
	close(open(ready, O_CREAT | O_WRONLY, 0666));
}

/* Create TARGET.ready, then wait to be killed. */
static int wait_killed(const char *target)
{
	say_ready(target);
	for (;;)
		pause();
}

/* Write VALUE into fixed buffer 0 of RING through one IORING_OP_READ_FIXED. */
static int write_fixed(int ring, struct io_uring_params *p, void *buf, unsigned long value)
{
	size_t sq_size = p->sq_off.array + p->sq_entries * sizeof(unsigned);
	struct io_uring_sqe *sqes;
	unsigned *sq_tail, *sq_array;
	char *sq;
	int src[2];

	sq = mmap(NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQ_RING);
	sqes = mmap(NULL, p->sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE, MAP_SHARED,
		    ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || sqes == MAP_FAILED || pipe(src) ||
	    write(src[1], &value, sizeof(value)) != sizeof(value))
		return -1;
	sq_tail = (unsigned *)(sq + p->sq_off.tail);
	sq_array = (unsigned *)(sq + p->sq_off.array);
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_READ_FIXED;
	sqes[0].fd = src[0];
	sqes[0].addr = (unsigned long)buf;
	sqes[0].len = sizeof(value);
	sqes[0].buf_index = 0;
	sq_array[*sq_tail & *(unsigned *)(sq + p->sq_off.ring_mask)] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	return syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) == 1 ? 0 : -1;
}

/* The object at TARGET, pinned as a fixed buffer and then unmapped and closed. */
static int pin(const char *target, unsigned long value)
{
	struct io_uring_params params = { 0 };
	struct iovec iov = { .iov_len = 4096 };
	sigset_t usr1;
	int fd, ring, sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	fd = open(target, O_RDWR | O_CREAT | O_EXCL, 0666);
	if (fd < 0 || fchmod(fd, 0666) || ftruncate(fd, 4096))
		return 1;
	iov.iov_base = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ring = syscall(SYS_io_uring_setup, 4, &params);
	if (iov.iov_base == MAP_FAILED || ring < 0 ||
	    syscall(SYS_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1)) {
		perror("pin");
		return 1;
	}
	munmap(iov.iov_base, 4096);
	close(fd);
	say_ready(target);
	sigwait(&usr1, &sig);
	return write_fixed(ring, &params, iov.iov_base, value) ? 1 : 0;
}

/* Zero TARGET by path, twice, then give it back its page. */
static int zero(const char *target)
{
	int fd = open(target, O_RDONLY | O_TRUNC);

	printf("O_TRUNC: %s\n", result(fd < 0));
	if (fd >= 0)
		close(fd);
	printf("truncate: %s\n", result(truncate(target, 0)));
	truncate(target, 4096);
	return 0;
}

static int share(const char *way, const char *target, unsigned long value, const char *as)
{
	int hold = !strcmp(way, "hold"), keep = hold || !strcmp(way, "keep"), fd;
	void **page;

	if (drop(as)) {
		perror(as);
		return 1;
	}
	if (!strcmp(way, "pin"))
		return pin(target, value);
	if (!strcmp(way, "truncate"))
		return zero(target);
	if (!strcmp(way, "sysv")) {
		page = shmat(atoi(target), NULL, 0);
		printf("shmat: %s\n", result(page == (void *)-1));
		if (page == (void *)-1)
			return 0;
	} else {
		fd = open(target, O_RDWR | (keep ? O_CREAT | O_EXCL : 0), 0666);
		if (!keep)
			printf("open: %s\n", result(fd < 0));
		if (fd < 0 || (keep && (fchmod(fd, 0666) || ftruncate(fd, 4096))))
			return keep;
		if (hold)
			return pwrite(fd, &value, sizeof(value), 0) != sizeof(value) ||
			       wait_killed(target);
		page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (!keep)
			printf("mmap: %s\n", result(page == MAP_FAILED));
		if (page == MAP_FAILED)
			return keep;
	}
	*page = (void *)value;
	fflush(stdout);
	return keep && wait_killed(target);
}

/* Keep CAP_BPF and CAP_PERFMON only, as an observability agent has them. */
static int bpf_caps_only(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { { 0 }, { 0 } };

	data[CAP_BPF / 32].effective |= 1u << CAP_BPF % 32;
	data[CAP_PERFMON / 32].effective |= 1u << CAP_PERFMON % 32;
	data[1].permitted = data[1].effective;
	return syscall(SYS_capset, &hdr, data);
}

static int kprobe_pmu(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/kprobe/type", "r");
	int type = -1;

	if (f) {
		if (fscanf(f, "%d", &type) != 1)
			type = -1;
		fclose(f);
	}
	return type;
}

static int bpf_override(pid_t pid, unsigned long value)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 6, .src_reg = 1 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_pid_tgid },
		{ .code = BPF_ALU64 | BPF_RSH | BPF_K, .dst_reg = 0, .imm = 32 },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = 0, .off = 4, .imm = pid },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 1, .src_reg = 6 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 2, .imm = (int)value },
		{ .imm = (int)(value >> 32) },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_override_return },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = kprobe_pmu(),
		.config1 = (unsigned long)"__x64_sys_getppid",
	};
	union bpf_attr load = {
		.prog_type = BPF_PROG_TYPE_KPROBE,
		.insns = (unsigned long)prog,
		.insn_cnt = sizeof(prog) / sizeof(prog[0]),
		.license = (unsigned long)"GPL",
	};
	int prog_fd, event;

	if (bpf_caps_only()) {
		perror("capset");
		return 1;
	}
	prog_fd = syscall(SYS_bpf, BPF_PROG_LOAD, &load, sizeof(load));
	printf("BPF_PROG_LOAD: %s\n", result(prog_fd < 0));
	if (prog_fd < 0)
		return 0;
	event = syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);
	printf("attach: %s\n", result(event < 0 || ioctl(event, PERF_EVENT_IOC_SET_BPF, prog_fd) ||
					ioctl(event, PERF_EVENT_IOC_ENABLE, 0)));
	fflush(stdout);
	sleep(2);
	return 0;
}

/* An ordinary process in the kernel, interrupted there again and again. */
static int spin(void)
{
	static char buf[1 << 20];
	time_t end = time(NULL) + 4;
	int fd;

	if (setgid(1000) || setuid(1000))
		return 1;
	fd = open("/dev/zero", O_RDONLY);
	while (fd >= 0 && time(NULL) < end)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	return 0;
}

/* Count the samples of r12 equal to SECRET in a ring buffer of 2^n pages. */
static int samples_of(struct perf_event_mmap_page *meta, unsigned long secret)
{
	char *data = (char *)meta + meta->data_offset;
	__u64 head = meta->data_head, tail = meta->data_tail, size = meta->data_size;
	int found = 0;

	__sync_synchronize();
	while (tail < head) {
		struct perf_event_header *h = (void *)(data + tail % size);
		__u64 *words = (void *)(h + 1);

		/* A sample: the ABI word, then r12. */
		if (h->type == PERF_RECORD_SAMPLE && tail % size + 24 <= size && words[1] == secret)
			found++;
		tail += h->size;
	}
	return found;
}

static int perf(pid_t pid, unsigned long secret)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = 100000,
		.sample_type = PERF_SAMPLE_REGS_USER,
		.sample_regs_user = 1ULL << PERF_REG_X86_R12,
	};
	void *ring;
	int fd;

	if (prctl(PR_SET_KEEPCAPS, 1) || setgid(1000) || setuid(1000) ||
	    set_cap(CAP_PERFMON, 1)) {
		perror("keeping CAP_PERFMON");
		return 1;
	}
	fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);
	printf("perf_event_open: %s\n", result(fd < 0));
	if (fd < 0)
		return 0;
	ring = mmap(NULL, 9 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		perror("perf mmap");
		return 1;
	}
	sleep(1);
	printf("samples holding the secret: %s\n", samples_of(ring, secret) ? "some" : "none");
	return 0;
}

static int keep_admin_as_1000(void)
{
	if (prctl(PR_SET_KEEPCAPS, 1) || setgid(1000) || setuid(1000))
		return -1;
	return set_cap(CAP_SYS_ADMIN, 1);
}

static int launch(const char *how, char **argv)
{
	if (!strcmp(how, "traced")) {
		while (!traced())
			usleep(1000);
	} else if (keep_admin_as_1000()) {
		perror("keeping CAP_SYS_ADMIN");
		return 1;
	}
	execv(argv[0], argv);
	printf("exec %s: %s\n", !strcmp(how, "traced") ?
	       "under a tracer without CAP_SYS_ADMIN" : "keeping CAP_SYS_ADMIN", strerror(errno));
	return 0;
}

static int trace(pid_t pid)
{
	int status;

	if (set_cap(CAP_SYS_ADMIN, 0)) {
		perror("dropping CAP_SYS_ADMIN");
		return 1;
	}
	printf("tracer without CAP_SYS_ADMIN attaches: %s\n",
	       result(ptrace(PTRACE_SEIZE, pid, NULL, (void *)PTRACE_O_TRACEEXEC)));
	fflush(stdout);
	while (waitpid(pid, &status, 0) == pid && WIFSTOPPED(status)) {
		if (status >> 8 == (SIGTRAP | PTRACE_EVENT_EXEC << 8)) {
			printf("after the exec, the tracer holds the program\n");
			fflush(stdout);
		}
		ptrace(PTRACE_CONT, pid, NULL, NULL);
	}
	return 0;
}

/*
 * A seized process that stops with the kernel's CS (0x10) and whose memory
 * the tracer reads is a UKL program under the intruder's control.  (A seize
 * of a process that is exiting, and has no memory left, catches nothing.)
 */
static int controls(pid_t pid)
{
	struct user_regs_struct regs;
	int status;

	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) ||
	    waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status))
		return 0;
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs))
		return 0;
	errno = 0;
	ptrace(PTRACE_PEEKDATA, pid, (void *)regs.rsp, NULL);
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	return errno == 0 && regs.cs == 0x10;
}

/* The launcher had CAP_SYS_ADMIN until its exec: no seize succeeds before. */
static int race(void)
{
	int execs = 0, caught = 0, status;
	char line[32];
	pid_t pid;
	long failed;

	while (fgets(line, sizeof(line), stdin)) {
		pid = atoi(line);
		execs++;
		do
			failed = ptrace(PTRACE_SEIZE, pid, NULL, NULL);
		while (failed && errno != ESRCH);
		if (failed)
			continue;
		caught += controls(pid);
		while (waitpid(pid, &status, __WALL) == pid && WIFSTOPPED(status))
			ptrace(PTRACE_CONT, pid, NULL, NULL);
	}
	printf("%d execs raced, %d UKL programs seized\n", execs, caught);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long addr, value;
	char path[64], comm[64];
	struct dirent *d;
	DIR *dir;

	if (argc == 3 && !strcmp(argv[1], "trace"))
		return trace(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "race"))
		return race();
	if (argc >= 4 && !strcmp(argv[1], "exec"))
		return launch(argv[2], argv + 3);
	if (argc == 3 && !strcmp(argv[1], "listener"))
		return listener(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "perf"))
		return perf(atoi(argv[2]), strtoul(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "bpf"))
		return bpf_override(atoi(argv[2]), strtoul(argv[3], NULL, 0));
	if (argc == 2 && !strcmp(argv[1], "spin"))
		return spin();
	if (argc == 6 && !strcmp(argv[1], "share"))
		return share(argv[2], argv[3], strtoul(argv[4], NULL, 0), argv[5]);
	if (argc == 6 && !strcmp(argv[1], "parent"))
		return parent(argv[2], argv[3], strtoul(argv[4], NULL, 0), strtoul(argv[5], NULL, 0));
	if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "nomodule"))) {
		fprintf(stderr, "usage: ukl-intruder PID ADDR VALUE [nomodule] | trace PID | race | "
			"exec HOW PATH ARG... | parent HOW PATH ADDR VALUE | listener PATH | "
			"share WAY TARGET VALUE AS | perf PID SECRET | bpf PID VALUE | spin\n");
		return 2;
	}
	if (argc == 5 && drop("nomodule")) {
		perror("dropping CAP_SYS_MODULE");
		return 1;
	}
	addr = strtoul(argv[2], NULL, 0);
	value = strtoul(argv[3], NULL, 0);
	snprintf(path, sizeof(path), "/proc/%s/task", argv[1]);
	dir = opendir(path);
	if (!dir) {
		perror(path);
		return 1;
	}
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		comm_of(argv[1], d->d_name, comm, sizeof(comm));
		printf("%s mem: %s\n", comm, result(write_mem(argv[1], d->d_name, addr, value)));
		printf("%s process_vm_writev: %s\n", comm, result(write_vm(d->d_name, addr, value)));
		printf("%s PTRACE_SEIZE: %s\n", comm, result(seize(d->d_name)));
	}
	closedir(dir);
	return 0;
}
