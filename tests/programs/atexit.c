/* Exit status, atexit handlers in reverse order, and stdio flushed at exit. */
#include <stdio.h>
#include <stdlib.h>

static void first(void)
{
	printf("atexit: registered first, runs last\n");
}

static void second(void)
{
	printf("atexit: registered second, runs first\n");
}

int main(void)
{
	atexit(first);
	atexit(second);
	printf("buffered text without a newline, flushed by exit()");
	exit(7);
}
