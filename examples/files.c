/*
 * open, write, read, lseek, stat and unlink on tmpfs.  Paths are string
 * literals and buffers are static, so under UKL the kernel is handed
 * pointers into the program's own linked image.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char path[] = "/tmp/ukl-files.txt";
static const char text[] = "hello, tmpfs\n";
static char buf[64];
static struct stat st;

static int fail(const char *what)
{
	printf("%s failed: %s\n", what, strerror(errno));
	return 1;
}

int main(void)
{
	int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);

	if (fd < 0)
		return fail("open");
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return fail("write");
	if (lseek(fd, 7, SEEK_SET) != 7)
		return fail("lseek");
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return fail("read");
	printf("read %zd bytes after offset 7: %s", n, buf);
	if (stat(path, &st))
		return fail("stat");
	printf("stat: size %lld, mode %o\n", (long long)st.st_size, st.st_mode & 0777);
	close(fd);
	if (unlink(path))
		return fail("unlink");
	if (stat(path, &st) == 0 || errno != ENOENT)
		return fail("stat after unlink");
	printf("after unlink: %s\n", strerror(errno));
	return 0;
}
