#include <stdio.h>
#include <stdlib.h>
#include "stats.h"

int main(int argc, char **argv)
{
	double xs[64];
	size_t n = 0;
	struct summary s;

	for (int i = 1; i < argc && n < 64; i++)
		xs[n++] = strtod(argv[i], NULL);
	if (n == 0) {
		fprintf(stderr, "usage: stats NUMBER...\n");
		return 2;
	}
	summarise(xs, n, &s);
	printf("n=%zu mean=%.3f stddev=%.3f min=%.3f max=%.3f\n", n, s.mean, s.stddev, s.min,
	       s.max);
	printf("plugin: %s\n", load_plugin("/lib/stats-plugin.so"));
	return 0;
}
