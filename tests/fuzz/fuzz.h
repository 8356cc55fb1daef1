/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by the libFuzzer targets in this directory (see README.md). A
 * broken property aborts, which libFuzzer records as a crash with the input
 * that caused it. */
#ifndef PT_FUZZ_H
#define PT_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(cond)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: property failed: %s\n",       \
				__FILE__, __LINE__, #cond);                   \
			abort();                                              \
		}                                                             \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A heap copy of exactly n bytes, so ASan flags any read past the input. */
static inline char *fuzz_dup(const uint8_t *data, size_t n)
{
	char *p = malloc(n ? n : 1);

	if (!p)
		abort();
	if (n)
		memcpy(p, data, n);
	return p;
}

/* A NUL-terminated heap copy of the input (embedded NULs end the text). */
static inline char *fuzz_str(const uint8_t *data, size_t n)
{
	char *p = malloc(n + 1);

	if (!p)
		abort();
	if (n)
		memcpy(p, data, n);
	p[n] = '\0';
	return p;
}

/* True if every byte of the object is zero. */
static inline int fuzz_all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

#endif
