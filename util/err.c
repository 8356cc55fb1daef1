/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include "err.h"

void pt_err_call_to(FILE *f, const char *call, int err, const char *fmt, ...)
{
	va_list ap;

	fputc(' ', f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fprintf(f, ": %s() failed: %s (%d)\n", call, strerror(err), err);
}

int pt_err_code(int rc)
{
	if (rc > 0)
		return rc;
	if (rc < -1)
		return -rc;
	return errno ? errno : EIO;
}
