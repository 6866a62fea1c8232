/*
 * Shared memory from /dev/zero, as older programs make it.  The mapping is
 * the program's own (a new shmem object), and /dev/zero stays everyone's:
 * an ordinary process (ukl-intruder, as nobody) then maps it shared and
 * writable too, as on Linux.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int fd = open("/dev/zero", O_RDWR);
	void *page = fd < 0 ? MAP_FAILED :
		     mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	pid_t child;

	printf("the program maps /dev/zero: %s\n", page == MAP_FAILED ? strerror(errno) : "ok");
	fflush(stdout);
	child = fork();
	if (child == 0) {
		execl("/bin/ukl-intruder", "ukl-intruder", "share", "path", "/dev/zero", "0x1",
		      "nobody", (char *)NULL);
		_exit(127);
	}
	waitpid(child, NULL, 0);
	return 0;
}
