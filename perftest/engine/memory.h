/* SPDX-License-Identifier: BSD-2-Clause */
/* Issue 18, memory group: the work buffer's origin and registration
 * (memory.c) and its contents: payload pattern, data validation
 * (payload.c). */
#ifndef PT_MEMORY_H
#define PT_MEMORY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <infiniband/verbs.h>
#include "perftest/cli/params.h"
#include "res.h"

struct pt_ctx;

/* r->buf_len bytes from the heap (zeroed), huge pages or --mmap's file. */
int pt_mem_alloc(struct pt_res *r, const struct pt_mem_params *m, size_t page);
void pt_mem_free(struct pt_res *r);
/* QP i's send and receive regions (side by side with --mr_per_qp). */
void pt_mem_layout(const struct pt_res *r, bool mr_per_qp, int i, uint8_t **send, uint8_t **recv);
/* MR access flags: ours, plus IBV_ACCESS_ON_DEMAND with --odp. */
int pt_mem_access(const struct pt_params *p);
/* --odp: 0 when caps allow the tool's verb on its transport, else -1 and
 * why (naming the capability) in why. */
int pt_odp_check(const struct ibv_odp_caps *caps, const struct pt_params *p, char *why, size_t len);
/* One MR, or one per QP; the null MR with --use-null-mr. */
int pt_mem_register(struct pt_ctx *c);
void pt_mem_deregister(struct pt_res *r);

/* --payload_file_path: comma or space separated 32-bit hex words
 * ("0xaaaaaaaa, 0xbbbbbbbb"), each stored little endian. 0, or -1 with a
 * message naming the file and line on stderr. *out is malloc'd. */
int pt_payload_parse(FILE *in, const char *name, uint8_t **out, size_t *len);
/* The byte at offset off of QP qp's region: the payload pattern repeated,
 * or without one data validation's own pattern (it differs per QP, so a
 * message landing in another QP's region shows). */
uint8_t pt_pattern_byte(const uint8_t *pat, size_t plen, int qp, size_t off);
/* The bytes a run of size bytes writes in a region: slots of size bytes,
 * step apart (the cycle buffer, docs/upstream-behaviour.md §5.1). */
struct pt_extent {
	size_t size, step, slots;
};
struct pt_extent pt_written_extent(uint64_t size, int page, int line, uint64_t iters);
/* Compare region buf of QP qp with the pattern over ext; returns the
 * mismatching bytes, printing the first few offsets to dbg when not NULL. */
uint64_t pt_dv_check(const uint8_t *buf, const uint8_t *pat, size_t plen, int qp,
		     struct pt_extent ext, FILE *dbg);

/* Load the payload file, fill the regions the data comes from. */
int pt_mem_fill(struct pt_ctx *c);
/* --data_validation at the end of a run: check the regions data arrived
 * in (recv: ours written by the peer; else: our READ targets); prints the
 * verdict. 0 when all matched, -1 on a mismatch. */
int pt_mem_validate(struct pt_ctx *c, bool recv);

#endif
