/* SPDX-License-Identifier: BSD-2-Clause */
/* util/err: a failed call is said with what we did, the call, and its code. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "util/err.h"

static char *said(const char *call, int err, const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	pt_err_call_to(f, call, err, "%s", what);
	fclose(f);
	return buf;
}

static void line_names_call_and_code(void **state)
{
	char *s = said("ibv_req_notify_cq", EINVAL, "Couldn't request CQ notification");

	(void)state;
	assert_string_equal(s, " Couldn't request CQ notification: ibv_req_notify_cq() failed: "
			       "Invalid argument (22)\n");
	free(s);
}

static void code_from_each_convention(void **state)
{
	(void)state;
	assert_int_equal(pt_err_code(ENOMEM), ENOMEM);      /* returned as the value */
	assert_int_equal(pt_err_code(-EAGAIN), EAGAIN);     /* returned negated */
	errno = EBADF;
	assert_int_equal(pt_err_code(-1), EBADF);           /* -1 and errno */
	assert_int_equal(pt_err_code(0), EBADF);            /* NULL and errno */
	errno = 0;
	assert_int_equal(pt_err_code(0), EIO);              /* nothing said: still a code */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(line_names_call_and_code),
		cmocka_unit_test(code_from_each_convention),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
