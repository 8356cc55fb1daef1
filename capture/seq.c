/* SPDX-License-Identifier: BSD-2-Clause */
#include "seq.h"

bool cap_seq_read(const struct cap_seq_fmt *f, const uint8_t *app, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (!f->width || f->offset > len || len - f->offset < f->width)
		return false;
	for (unsigned i = 0; i < f->width; i++) {
		unsigned b = f->little_endian ? f->width - 1 - i : i;

		v = v << 8 | app[f->offset + b];
	}
	*out = v;
	return true;
}

void cap_seq_update(struct cap_seq *s, unsigned width, uint64_t seq)
{
	uint64_t mask = width >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;
	uint64_t ahead;

	if (!s->started) {
		s->started = true;
		s->first = seq;
		s->next = (seq + 1) & mask;
		return;
	}
	/* distance forward from the expected number, modulo the width: a short
	 * way ahead is a gap, the far half of the space is behind (late) */
	ahead = (seq - s->next) & mask;
	if (ahead > mask / 2) {
		s->late++;
		return;
	}
	s->lost += ahead;
	s->next = (seq + 1) & mask;
}
