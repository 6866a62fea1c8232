/*
 * Waits to be stopped, as a server does, for `ukl run`'s graceful stop.
 * It prints "waiting at CPLn" and then, by its argument:
 *   handle  catches SIGTERM and SIGINT, leaves /out/stopped.txt naming the
 *           signal, and exits 0;
 *   ignore  ignores both (the host must kill it);
 *   (none)  keeps the default actions (the signal kills it).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	caught = sig;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	unsigned short cs;
	FILE *f;

	if (!strcmp(how, "handle")) {
		signal(SIGTERM, on_signal);
		signal(SIGINT, on_signal);
	} else if (!strcmp(how, "ignore")) {
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
	}
	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	printf("waiting at CPL%d\n", cs & 3);
	fflush(stdout);
	while (!caught)
		pause();
	printf("caught %s\n", strsignal(caught));
	f = fopen("/out/stopped.txt", "w");
	if (f) {
		fprintf(f, "stopped by signal %d\n", caught);
		fclose(f);
	}
	return 0;
}
