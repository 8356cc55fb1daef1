/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests: what a call prints on stderr, captured through a temporary
 * file (fd 2 redirected, then restored). Include after <cmocka.h>. */
#ifndef PT_TEST_STDERR_CAPTURE_H
#define PT_TEST_STDERR_CAPTURE_H

#include <stdio.h>
#include <unistd.h>

struct stderr_capture {
	FILE *tmp;
	int saved;
};

static inline void stderr_capture_begin(struct stderr_capture *cap)
{
	cap->tmp = tmpfile();
	cap->saved = dup(2);
	assert_non_null(cap->tmp);
	fflush(stderr);
	assert_true(dup2(fileno(cap->tmp), 2) >= 0);
}

/* Restores stderr; the text printed meanwhile goes to out (NUL-terminated). */
static inline void stderr_capture_end(struct stderr_capture *cap, char *out, size_t len)
{
	size_t n;

	fflush(stderr);
	dup2(cap->saved, 2);
	close(cap->saved);
	rewind(cap->tmp);
	n = fread(out, 1, len - 1, cap->tmp);
	out[n] = '\0';
	fclose(cap->tmp);
}

#endif
