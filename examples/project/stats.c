#include <math.h>
#include "stats.h"

void summarise(const double *xs, size_t n, struct summary *out)
{
	double sum = 0, sq = 0;

	out->min = out->max = xs[0];
	for (size_t i = 0; i < n; i++) {
		sum += xs[i];
		sq += xs[i] * xs[i];
		out->min = xs[i] < out->min ? xs[i] : out->min;
		out->max = xs[i] > out->max ? xs[i] : out->max;
	}
	out->mean = sum / n;
	out->stddev = sqrt(sq / n - out->mean * out->mean);
}
