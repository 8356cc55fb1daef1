/* SPDX-License-Identifier: BSD-2-Clause */
/* The parameter negotiation block N of perftest 6.28+ (docs/wire-protocol.md §7):
 * the test's scalars in big-endian, the sender's raw device attributes and,
 * in builds with mlx5dv, a capability mask. Both sides must agree on every
 * scalar; a difference is reported by name with both values. Pure codec:
 * no I/O, no libibverbs. */
#ifndef PT_NEGOTIATE_H
#define PT_NEGOTIATE_H
#include <stddef.h>
#include <stdint.h>

#define PT_NEG_SIZE 312          /* builds without mlx5dv */
#define PT_NEG_SIZE_MLX5DV 320   /* mainstream distro builds: what we send */
#define PT_NEG_DEV_ATTR_OFF 80
#define PT_NEG_DEV_ATTR_LEN 232  /* struct ibv_device_attr on x86_64, host order */

/* Upstream's enum values, as they travel. */
enum { PT_NEG_RUN_REGULAR, PT_NEG_RUN_ALL, PT_NEG_RUN_INFINITELY };
enum { PT_NEG_RC, PT_NEG_UC, PT_NEG_UD };
enum { PT_NEG_SEND, PT_NEG_SEND_IMM, PT_NEG_WRITE, PT_NEG_WRITE_IMM, PT_NEG_READ, PT_NEG_ATOMIC };
enum { PT_NEG_LAT, PT_NEG_BW };
enum { PT_NEG_CMP_AND_SWAP, PT_NEG_FETCH_AND_ADD };
enum { PT_NEG_ITERATIONS, PT_NEG_DURATION };
enum { PT_NEG_GBS, PT_NEG_MBS };

/* The scalars, in wire order (all int32 but size and iters). */
enum pt_neg_field {
	PT_NEG_TEST_METHOD, PT_NEG_CONNECTION, PT_NEG_VERB, PT_NEG_TST, PT_NEG_ATOMIC_TYPE,
	PT_NEG_TEST_TYPE, PT_NEG_REPORT_FMT, PT_NEG_SIZE_F, PT_NEG_ITERS, PT_NEG_AES_XTS,
	PT_NEG_NUM_QPS, PT_NEG_DURATION_S, PT_NEG_USE_RDMA_CM, PT_NEG_WRITE_WITH_IMM,
	PT_NEG_NO_ENH_REORDER, PT_NEG_SIG_OFFLOAD, PT_NEG_DATA_VALIDATION,
	PT_NEG_NFIELDS
};

struct pt_negotiate {
	int64_t v[PT_NEG_NFIELDS];            /* by enum pt_neg_field */
	uint8_t dev_attr[PT_NEG_DEV_ATTR_LEN]; /* the sender's, its byte order */
	uint64_t mlx5dv_mask;                 /* 320-byte form only */
};

/* Upstream's name of field f (as its mismatch messages print it). */
const char *pt_neg_field_name(enum pt_neg_field f);
/* Write n in the layout of size len (312 or 320) into out; len or -1. */
int pt_neg_encode(const struct pt_negotiate *n, size_t len, uint8_t *out);
/* Strict: len 312 or 320, no negative count, size, iteration or duration,
 * enum fields within upstream's ranges. 0, or -1 with *n zeroed. */
int pt_neg_parse(const uint8_t *in, size_t len, struct pt_negotiate *n);
/* A block from a peer below 6.29 (6.28): offset 76 is padding there, never
 * read by that peer and not necessarily zero. Clear it before pt_neg_parse()
 * so that neither the range check nor the comparison judges it. */
void pt_neg_drop_629_fields(uint8_t *block, size_t len);
/* Every scalar equal: 0. Else the number of fields that differ, and the
 * first few described in why as "<name> mismatch: local=X, remote=Y". */
int pt_neg_compare(const struct pt_negotiate *local, const struct pt_negotiate *remote,
		   char *why, size_t len);

#endif
