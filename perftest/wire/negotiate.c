/* SPDX-License-Identifier: BSD-2-Clause */
/* Parameter negotiation block, see negotiate.h and docs/wire-protocol.md §7. */
#include <stdio.h>
#include <string.h>
#include "negotiate.h"
#include "wire.h"

/* Wire offset of each scalar; size and iters are the two 8-byte ones. */
static const struct {
	const char *name;
	uint8_t off;
	int64_t max;            /* values above are refused; enums list names */
	const char *const *names;
} fields[PT_NEG_NFIELDS] = {
	[PT_NEG_TEST_METHOD] = { "test_method", 0, 2,
		(const char *const[]){ "RUN_REGULAR", "RUN_ALL", "RUN_INFINITELY" } },
	[PT_NEG_CONNECTION] = { "connection_type", 4, 6,
		(const char *const[]){ "RC", "UC", "UD", "RawEth", "XRC", "DC", "SRD" } },
	[PT_NEG_VERB] = { "verb", 8, 5,
		(const char *const[]){ "SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "ATOMIC" } },
	[PT_NEG_TST] = { "tst", 12, 3,
		(const char *const[]){ "LAT", "BW", "LAT_BY_BW", "FS_RATE" } },
	[PT_NEG_ATOMIC_TYPE] = { "atomicType", 16, 1,
		(const char *const[]){ "CMP_AND_SWAP", "FETCH_AND_ADD" } },
	[PT_NEG_TEST_TYPE] = { "test_type", 20, 1,
		(const char *const[]){ "ITERATIONS", "DURATION" } },
	[PT_NEG_REPORT_FMT] = { "report_fmt", 24, 1, (const char *const[]){ "GBS", "MBS" } },
	[PT_NEG_SIZE_F] = { "size", 32, INT64_MAX, NULL },
	[PT_NEG_ITERS] = { "iters", 40, INT64_MAX, NULL },
	[PT_NEG_AES_XTS] = { "aes_xts", 48, 1, NULL },
	[PT_NEG_NUM_QPS] = { "num_of_qps", 52, INT32_MAX, NULL },
	[PT_NEG_DURATION_S] = { "duration", 56, INT32_MAX, NULL },
	[PT_NEG_USE_RDMA_CM] = { "use_rdma_cm", 60, 1, NULL },
	[PT_NEG_WRITE_WITH_IMM] = { "use_write_with_imm", 64, 1, NULL },
	[PT_NEG_NO_ENH_REORDER] = { "no_enhanced_reorder", 68, 1, NULL },
	[PT_NEG_SIG_OFFLOAD] = { "sig_offload", 72, 1, NULL },
	[PT_NEG_DATA_VALIDATION] = { "data_validation", 76, 1, NULL },
};

void pt_neg_drop_629_fields(uint8_t *block, size_t len)
{
	size_t off = fields[PT_NEG_DATA_VALIDATION].off;

	if (block && len >= off + 4)
		memset(block + off, 0, 4);
}

static int wide(enum pt_neg_field f)
{
	return f == PT_NEG_SIZE_F || f == PT_NEG_ITERS;
}

const char *pt_neg_field_name(enum pt_neg_field f)
{
	return (unsigned)f < PT_NEG_NFIELDS ? fields[f].name : "?";
}

int pt_neg_encode(const struct pt_negotiate *n, size_t len, uint8_t *out)
{
	if (!n || !out || (len != PT_NEG_SIZE && len != PT_NEG_SIZE_MLX5DV))
		return -1;
	memset(out, 0, len);
	for (int f = 0; f < PT_NEG_NFIELDS; f++) {
		if (n->v[f] < 0 || n->v[f] > fields[f].max)
			return -1;
		if (wide(f))
			pt_be64_put((uint64_t)n->v[f], out + fields[f].off);
		else
			pt_be32_put((uint32_t)n->v[f], out + fields[f].off);
	}
	memcpy(out + PT_NEG_DEV_ATTR_OFF, n->dev_attr, PT_NEG_DEV_ATTR_LEN);
	if (len == PT_NEG_SIZE_MLX5DV)
		pt_be64_put(n->mlx5dv_mask, out + PT_NEG_SIZE);
	return (int)len;
}

int pt_neg_parse(const uint8_t *in, size_t len, struct pt_negotiate *n)
{
	if (!n)
		return -1;
	memset(n, 0, sizeof(*n));
	if (!in || (len != PT_NEG_SIZE && len != PT_NEG_SIZE_MLX5DV))
		return -1;
	for (int f = 0; f < PT_NEG_NFIELDS; f++) {
		/* signed on the wire: a huge count reads as negative and is refused */
		int64_t v = wide(f) ? (int64_t)pt_be64_get(in + fields[f].off)
				    : (int64_t)(int32_t)pt_be32_get(in + fields[f].off);

		if (v < 0 || v > fields[f].max) {
			memset(n, 0, sizeof(*n));
			return -1;
		}
		n->v[f] = v;
	}
	memcpy(n->dev_attr, in + PT_NEG_DEV_ATTR_OFF, PT_NEG_DEV_ATTR_LEN);
	if (len == PT_NEG_SIZE_MLX5DV)
		n->mlx5dv_mask = pt_be64_get(in + PT_NEG_SIZE);
	return 0;
}

static void show(enum pt_neg_field f, int64_t v, char *buf, size_t len)
{
	if (fields[f].names && v >= 0 && v <= fields[f].max)
		snprintf(buf, len, "%s", fields[f].names[v]);
	else
		snprintf(buf, len, "%lld", (long long)v);
}

int pt_neg_compare(const struct pt_negotiate *local, const struct pt_negotiate *remote,
		   char *why, size_t len)
{
	size_t used = 0;
	int diff = 0;

	if (why && len)
		why[0] = '\0';
	for (int f = 0; f < PT_NEG_NFIELDS; f++) {
		char a[32], b[32];
		int w;

		if (local->v[f] == remote->v[f])
			continue;
		if (diff++ >= 4 || !why || used >= len)
			continue;
		show(f, local->v[f], a, sizeof(a));
		show(f, remote->v[f], b, sizeof(b));
		w = snprintf(why + used, len - used, "%s%s mismatch: local=%s, remote=%s",
			     used ? "; " : "", fields[f].name, a, b);
		used += w > 0 ? (size_t)w : 0;
	}
	return diff;
}
