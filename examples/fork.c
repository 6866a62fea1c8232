/*
 * fork: the child writes to its copies and exits with a status that the
 * parent collects.  Every process owns its globals, stack, heap and
 * mappings, under UKL as on Linux: the child's writes stay in the child.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int global = 1;

int main(void)
{
	int on_stack = 1;
	int *on_heap = malloc(sizeof(*on_heap));
	int *mapped = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int status;
	pid_t pid;

	*on_heap = 1;
	*mapped = 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		static const char msg[] = "child: wrote 2 to its global, stack, heap and mapping\n";

		global = on_stack = *on_heap = *mapped = 2;
		write(1, msg, strlen(msg));
		_exit(42);
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	printf("parent: child exited with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	printf("parent sees stack %d, heap %d, mapping %d\n", on_stack, *on_heap, *mapped);
	printf("parent sees global %d\n", global);
	return 0;
}
