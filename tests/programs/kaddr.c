/*
 * System calls given pointers: into the program's own image (a literal, a
 * static buffer, a global), which must work, and to kernel memory outside
 * it, which must fail with EFAULT, at CPL0 as at CPL3.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char from_bss[32];
static struct stat global_stat;

static void report(const char *what, long ret)
{
	printf("%-34s %s\n", what, ret < 0 ? strerror(errno) : "ok");
}

int main(void)
{
	/* The start of the kernel's own text: never part of an application image. */
	void *kernel = (void *)0xffffffff81000000UL;
	int fd = open("/proc/version", O_RDONLY);

	report("write() of a string literal:", write(1, "literal\n", 8));
	report("read() into a static buffer:", read(fd, from_bss, sizeof(from_bss) - 1));
	report("stat() into a global:", stat("/proc/version", &global_stat));
	report("write() from kernel memory:", write(1, kernel, 8));
	report("read() into kernel memory:", read(fd, kernel, 8));
	/* Raw: musl's stat() would copy into the buffer itself, from user code. */
	report("fstat() into kernel memory:", syscall(SYS_fstat, fd, kernel));
	report("open() of a kernel-memory path:", open(kernel, O_RDONLY));
	return 0;
}
