/*
 * A 32-bit program, beside a UKL program on a kernel with IA32 emulation
 * (booted with ia32_emulation=on).  Freestanding, so that it needs no
 * 32-bit C library: gcc -m32 -static -nostdlib -ffreestanding.
 *
 *   compat32 run              say it runs, in 32-bit code (CS 0x23)
 *   compat32 exec PATH ARG    execute PATH from a 32-bit system call
 *   compat32 trace PATH ARG   trace PATH as a 32-bit tracer: it may read
 *                             the registers but, under UKL, change neither
 *                             CS nor the trap flag
 */
#define SYS_exit	1
#define SYS_fork	2
#define SYS_write	4
#define SYS_waitpid	7
#define SYS_execve	11
#define SYS_ptrace	26

#define PTRACE_TRACEME	0
#define PTRACE_PEEKUSR	3
#define PTRACE_POKEUSR	6
#define PTRACE_KILL	8

/* Offsets in struct user32 (asm/user32.h) */
#define USER32_CS	52
#define USER32_EFLAGS	56
#define X86_EFLAGS_TF	0x100

static long sys(long nr, long a, long b, long c, long d)
{
	long ret;

	asm volatile("int $0x80" : "=a"(ret)
		     : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d) : "memory");
	return ret;
}

static unsigned long len(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

static void put(const char *s)
{
	sys(SYS_write, 1, (long)s, len(s), 0);
}

/* NAME: VALUE in hex, or as a negative errno */
static void say(const char *name, long value)
{
	char buf[16], *p = buf + sizeof(buf);
	unsigned long v = value < 0 ? -value : value;

	*--p = 0;
	*--p = '\n';
	do {
		*--p = "0123456789abcdef"[v % (value < 0 ? 10 : 16)];
		v /= value < 0 ? 10 : 16;
	} while (v);
	if (value < 0)
		*--p = '-';
	else {
		*--p = 'x';
		*--p = '0';
	}
	put(name);
	put(": ");
	put(p);
}

static int equal(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static int main32(int argc, char **argv, char **envp)
{
	char *args[] = { argv[2], argv[3], 0 };
	long pid, status = 0, cs, flags;

	if (argc == 2 && equal(argv[1], "run")) {
		asm("mov %%cs, %0" : "=r"(cs));
		say("32-bit program, CS", cs);
		return 0;
	}
	if (argc == 4 && equal(argv[1], "exec"))
		return sys(SYS_execve, (long)argv[2], (long)args, (long)envp, 0);
	if (argc != 4 || !equal(argv[1], "trace"))
		return 2;

	pid = sys(SYS_fork, 0, 0, 0, 0);
	if (pid == 0) {
		sys(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0);
		sys(SYS_execve, (long)argv[2], (long)args, (long)envp, 0);
		sys(SYS_exit, 127, 0, 0, 0);
	}
	sys(SYS_waitpid, pid, (long)&status, 0, 0);
	say("tracee stopped, status", status);
	sys(SYS_ptrace, PTRACE_PEEKUSR, pid, USER32_EFLAGS, (long)&flags);
	say("poke CS 0x23", sys(SYS_ptrace, PTRACE_POKEUSR, pid, USER32_CS, 0x23));
	say("poke the trap flag", sys(SYS_ptrace, PTRACE_POKEUSR, pid, USER32_EFLAGS,
				      flags | X86_EFLAGS_TF));
	sys(SYS_ptrace, PTRACE_KILL, pid, 0, 0);
	sys(SYS_waitpid, pid, (long)&status, 0, 0);
	say("tracee ended, status", status);
	return 0;
}

void start32(long *sp)
{
	int argc = sp[0];
	char **argv = (char **)(sp + 1);

	sys(SYS_exit, main32(argc, argv, argv + argc + 1), 0, 0, 0);
}

asm(".globl _start\n_start:\n\tpush %esp\n\tcall start32\n");
