/* glibc's error(), which mqueue/mq_open_tests reports with: the program's
 * name, the message, strerror(ERRNUM) if non-zero; exit(STATUS) if non-zero. */
#ifndef UKL_SHIM_ERROR_H
#define UKL_SHIM_ERROR_H
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void error(int status, int errnum, const char *format, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", program_invocation_name);
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
	if (status)
		exit(status);
}
#endif
