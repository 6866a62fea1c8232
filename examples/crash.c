/* Crashes as asked: "null" dereferences NULL, "abort" calls abort(),
 * "assert" fails an assertion; a core file shows where. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int *volatile nowhere;

static int __attribute__((noipa)) read_through(int *p)
{
	return *p;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "null";

	printf("crashing by %s\n", how);
	fflush(stdout);
	if (!strcmp(how, "abort"))
		abort();
	assert(strcmp(how, "assert") != 0);
	return read_through(nowhere) + 1;	/* not a tail call: main stays in the backtrace */
}
