#ifndef STATS_H
#define STATS_H
#include <stddef.h>

struct summary {
	double mean, stddev, min, max;
};

void summarise(const double *xs, size_t n, struct summary *out);
const char *load_plugin(const char *path);
#endif
