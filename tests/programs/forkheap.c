/*
 * A forking server's pattern: a parent and 4 children all use malloc, free,
 * stdio and globals at the same time.  Each process must see only its own
 * globals and heap, as on Linux.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILDREN 4
#define ROUNDS 2000

static int who = -1;
static long sum;
static char *blocks[64];

/* Allocate and free blocks of varying size, summing what each one held. */
static int churn(int id)
{
	for (int r = 0; r < ROUNDS; r++) {
		int slot = r % 64;

		free(blocks[slot]);
		blocks[slot] = malloc(16 + (r * 37 + id) % 2000);
		if (!blocks[slot])
			return -1;
		memset(blocks[slot], id, 16);
		sum += blocks[slot][id % 16];
		if (who != id)
			return -1;
	}
	return 0;
}

int main(void)
{
	pid_t pids[CHILDREN];
	int ok = 0;

	for (int i = 0; i < CHILDREN; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			return 1;
		}
		if (pids[i] == 0) {
			who = i + 1;
			if (churn(who) || sum != (long)who * ROUNDS)
				_exit(10 + i);
			printf("child %d: heap and globals are its own\n", who);
			exit(0);
		}
	}
	who = 0;
	if (churn(0) || sum != 0) {
		printf("parent: its globals changed under it\n");
		return 1;
	}
	for (int i = 0; i < CHILDREN; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)
			ok++;
	}
	printf("parent: %d of %d children exited 0; its own globals intact\n", ok, CHILDREN);
	return ok == CHILDREN ? 0 : 1;
}
