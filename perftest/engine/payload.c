/* SPDX-License-Identifier: BSD-2-Clause */
/* Issue 18, memory group: what the buffers hold. --payload_file_path's
 * pattern, data validation's own, and the check of what arrived. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "fault.h"
#include "memory.h"

#define PAYLOAD_MAX_WORDS (1u << 20)
#define DV_SHOWN 8                /* mismatching offsets printed per QP */

static int add_word(uint8_t **out, size_t *len, size_t *cap, uint32_t w)
{
	if (*len + 4 > *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		uint8_t *n = realloc(*out, ncap);

		if (!n)
			return -1;
		*out = n;
		*cap = ncap;
	}
	for (int b = 0; b < 4; b++)     /* little endian, whatever the host */
		(*out)[(*len)++] = (uint8_t)(w >> (8 * b));
	return 0;
}

int pt_payload_parse(FILE *in, const char *name, uint8_t **out, size_t *len)
{
	char line[4096];
	size_t cap = 0;
	unsigned lineno = 0;

	*out = NULL;
	*len = 0;
	while (fgets(line, sizeof(line), in)) {
		char *s = line;

		lineno++;
		for (;;) {
			char *end;
			unsigned long long w;

			while (*s == ',' || isspace((unsigned char)*s))
				s++;
			if (!*s)
				break;
			errno = 0;
			w = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char)s[2])) ?
			    strtoull(s + 2, &end, 16) : (end = s, 0);
			if (end == s || errno || w > 0xffffffffull ||
			    (*end && *end != ',' && !isspace((unsigned char)*end))) {
				fprintf(stderr, " --payload_file_path: %s line %u: '%.20s' is not a 32-bit"
					" hex word (0x0..0xffffffff)\n", name, lineno, s);
				goto fail;
			}
			if (*len / 4 >= PAYLOAD_MAX_WORDS) {
				fprintf(stderr, " --payload_file_path: %s has more than %u words\n",
					name, PAYLOAD_MAX_WORDS);
				goto fail;
			}
			if (add_word(out, len, &cap, (uint32_t)w)) {
				fprintf(stderr, " --payload_file_path: out of memory\n");
				goto fail;
			}
			s = end;
		}
	}
	if (ferror(in)) {
		fprintf(stderr, " --payload_file_path: couldn't read %s: %s\n", name, strerror(errno));
		goto fail;
	}
	if (!*len) {
		fprintf(stderr, " --payload_file_path: %s holds no words\n", name);
		goto fail;
	}
	return 0;
fail:
	free(*out);
	*out = NULL;
	*len = 0;
	return -1;
}

uint8_t pt_pattern_byte(const uint8_t *pat, size_t plen, int qp, size_t off)
{
	if (pat && plen)
		return pat[off % plen];
	/* an odd multiplier walks every byte value; +1 keeps zeros rare */
	return (uint8_t)(off * 167u + (size_t)qp * 59u + (off >> 8) + 1u);
}

struct pt_extent pt_written_extent(uint64_t size, int page, int line, uint64_t iters)
{
	struct pt_extent e = { .size = (size_t)size, .step = (size_t)size, .slots = 1 };
	uint64_t cycle = (uint64_t)page, l = line > 0 ? (uint64_t)line : 64;

	/* as post.c's cycle_offset: small messages step through one page */
	if (size > cycle / 2)
		return e;
	e.step = (size_t)((size + l - 1) / l * l);
	e.slots = (size_t)(cycle / e.step);
	if (iters && iters < e.slots)
		e.slots = (size_t)iters;
	return e;
}

uint64_t pt_dv_check(const uint8_t *buf, const uint8_t *pat, size_t plen, int qp,
		     struct pt_extent ext, FILE *dbg)
{
	uint64_t bad = 0;

	for (size_t j = 0; j < ext.slots; j++)
		for (size_t o = j * ext.step; o < j * ext.step + ext.size; o++) {
			uint8_t want = pt_pattern_byte(pat, plen, qp, o);

			if (buf[o] == want)
				continue;
			if (dbg && bad < DV_SHOWN)
				fprintf(dbg, " Data validation: QP %d offset %zu: expected 0x%02x, got 0x%02x\n",
					qp, o, want, buf[o]);
			bad++;
		}
	return bad;
}

/* READ fetches the peer's advertised (receive) regions; every other verb
 * sends from the send regions. */
static bool source_is_recv(const struct pt_params *p)
{
	return p->tool->verb == PT_VERB_READ;
}

int pt_mem_fill(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	struct pt_res *r = &c->res;

	if (*p->mem.payload_file) {
		FILE *f = fopen(p->mem.payload_file, "r");
		int rc;

		if (!f) {
			fprintf(stderr, " --payload_file_path: couldn't open %s: %s\n",
				p->mem.payload_file, strerror(errno));
			return -1;
		}
		rc = pt_payload_parse(f, p->mem.payload_file, &r->pattern, &r->pattern_len);
		fclose(f);
		if (rc)
			return -1;
	}
	if (!r->pattern && !p->mem.data_validation)
		return 0;
	for (int i = 0; i < r->num_qps; i++) {
		uint8_t *send, *recv, *src;

		pt_mem_layout(r, p->mem.mr_per_qp, i, &send, &recv);
		src = source_is_recv(p) ? recv : send;
		for (size_t o = 0; o < r->region; o++)
			src[o] = pt_pattern_byte(r->pattern, r->pattern_len, i, o);
		/* a bug of ours on purpose: the first byte QP 0 sends is wrong */
		if (i == 0 && pt_test_break_payload)
			src[0] ^= 0xff;
	}
	return 0;
}

int pt_mem_validate(struct pt_ctx *c, bool recv)
{
	const struct pt_params *p = c->p;
	struct pt_res *r = &c->res;
	uint64_t size = p->traffic.all_sizes ? c->run.max_size : c->run.size;
	uint64_t iters = p->traffic.test_type == PT_TEST_DURATION ? 0 : p->traffic.iters;
	struct pt_extent e = pt_written_extent(size, c->run.page_size, c->run.cache_line, iters);
	uint64_t bad = 0, checked = 0;

	for (int i = 0; i < r->num_qps; i++) {
		uint8_t *send, *recv_buf;
		uint64_t b;

		pt_mem_layout(r, p->mem.mr_per_qp, i, &send, &recv_buf);
		b = pt_dv_check(recv ? recv_buf : send, r->pattern, r->pattern_len, i, e,
				p->mem.data_validation_debug ? stderr : NULL);
		if (b)
			fprintf(stderr, " Data validation: QP %d: %llu of %zu bytes differ\n", i,
				(unsigned long long)b, e.slots * e.size);
		bad += b;
		checked += e.slots * e.size;
	}
	if (bad) {
		fprintf(stderr, " Data validation failed: %llu of %llu bytes differ\n",
			(unsigned long long)bad, (unsigned long long)checked);
		return -1;
	}
	printf(" Data validation passed: %llu bytes checked in %d QP%s\n",
	       (unsigned long long)checked, r->num_qps, r->num_qps > 1 ? "s" : "");
	return 0;
}
