/* SPDX-License-Identifier: BSD-2-Clause */
/* --cpu_util math over /proc/stat text (docs/upstream-behaviour.md §5.4). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>
#include "util/cpustat.h"

static void test_parse_first_line(void **state)
{
	struct pt_cpu_sample s;

	(void)state;
	assert_int_equal(pt_cpu_parse("cpu  100 5 20 900 3 0 1 0 0 0\ncpu0 1 2 3 4\n", &s), 0);
	assert_true(s.valid);
	assert_int_equal(s.user, 100);
	assert_int_equal(s.idle, 900);
}

static void test_parse_rejects(void **state)
{
	static const char *bad[] = { "", "cpu0 1 2 3 4", "cpu  1 2 3", "intr 1 2 3 4", "cpu  a b c d", NULL };
	struct pt_cpu_sample s;

	(void)state;
	for (int i = 0; bad[i]; i++) {
		assert_int_equal(pt_cpu_parse(bad[i], &s), -1);
		assert_false(s.valid);
	}
	assert_int_equal(pt_cpu_parse(NULL, &s), -1);
}

/* user +30, idle +90 -> 25 %; system and nice do not count. */
static void test_util_math(void **state)
{
	struct pt_cpu_sample a, b;

	(void)state;
	pt_cpu_parse("cpu  100 5 20 900", &a);
	pt_cpu_parse("cpu  130 50 500 990", &b);
	assert_float_equal(pt_cpu_util(&a, &b), 25.0, 1e-9);
	assert_float_equal(pt_cpu_util(&a, &a), -1.0, 1e-9);   /* nothing moved */
	assert_float_equal(pt_cpu_util(&b, &a), -1.0, 1e-9);   /* went backwards */
	b.valid = false;
	assert_float_equal(pt_cpu_util(&a, &b), -1.0, 1e-9);
}

static void test_read_file(void **state)
{
	char path[] = "/tmp/test_cpustat.XXXXXX";
	int fd = mkstemp(path);
	struct pt_cpu_sample s;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "cpu  7 0 0 3\n", 13), 13);
	close(fd);
	assert_int_equal(pt_cpu_read(path, &s), 0);
	assert_int_equal(s.user, 7);
	unlink(path);
	assert_int_equal(pt_cpu_read(path, &s), -1);
	assert_int_equal(pt_cpu_read(NULL, &s), 0);    /* the real /proc/stat */
	assert_true(s.valid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_first_line),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_util_math),
		cmocka_unit_test(test_read_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
