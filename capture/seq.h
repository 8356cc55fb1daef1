/* SPDX-License-Identifier: BSD-2-Clause */
/* Loss accounting per source from a sequence number in the application
 * header (capture/rdmacap.8, "Loss"): a gap is loss, a number below the
 * next expected one is late (reordered or duplicate), counted apart. */
#ifndef CAP_SEQ_H
#define CAP_SEQ_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cap_seq_fmt {
	size_t offset;      /* from the first byte of the application data */
	unsigned width;     /* bytes: 1, 2, 4 or 8; 0 = no sequence number */
	bool little_endian;
};

struct cap_seq {
	bool started;
	uint64_t next;      /* the number expected next */
	uint64_t first;
	uint64_t lost;      /* numbers never seen (gaps) */
	uint64_t late;      /* below `next`: reordered or duplicate */
	uint64_t short_pkts;/* too short to hold the number */
};

/* Read the number from app (len bytes); false when it does not fit. */
bool cap_seq_read(const struct cap_seq_fmt *f, const uint8_t *app, size_t len, uint64_t *out);

/* Account one packet's number; width bytes wrap (2^(8*width)). */
void cap_seq_update(struct cap_seq *s, unsigned width, uint64_t seq);

/* The seed's format (capture/rdmacap.8, "--preset seed"): a 64-byte
 * application header starting with a 64-bit big-endian frame counter. */
#define CAP_SEED_APP_HEADER 64
#define CAP_SEED_SEQ_OFFSET 0
#define CAP_SEED_SEQ_WIDTH 8

#endif
