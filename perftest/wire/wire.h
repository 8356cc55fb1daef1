/* SPDX-License-Identifier: BSD-2-Clause */
/* Out-of-band wire formats (docs/wire-protocol.md): pure encoders, strict
 * bounded parsers and the peer-version rules. No I/O, no libibverbs. */
#ifndef PT_WIRE_H
#define PT_WIRE_H
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#ifndef WIRE_VERSION
#define WIRE_VERSION "6.06"
#endif

#define PT_DEF_PORT 18515
#define PT_VERSION_LEN 16      /* V: NUL-padded ASCII, 16 bytes */
#define PT_KEY_MSG_SIZE 59     /* K without GID: 58 chars + NUL */
#define PT_KEY_MSG_SIZE_GID 108 /* K with GID: 107 chars + NUL */
/* 6.29 with --data_validation: the tail-markers address after vaddr (+17) */
#define PT_KEY_MSG_SIZE_DV 76
#define PT_KEY_MSG_SIZE_GID_DV 125
#define PT_KEY_MSG_MAX PT_KEY_MSG_SIZE_GID_DV
#define PT_MTU_MSG_MAX 4       /* M: 2 or 4 bytes */
#define PT_SYSDATA_MAX (1 << 30) /* sanity bound for page/cache-line size */
#define PT_OLDEST_PEER "5.70"

/* One "pingpong_dest": what a peer needs to reach one of our QPs. */
struct pt_key {
	uint16_t lid;
	uint16_t out_reads;
	uint32_t qpn;     /* 24 bits on the wire */
	uint32_t psn;     /* 24 bits on the wire */
	uint32_t rkey;
	uint64_t vaddr;
	uint8_t gid[16];  /* only carried in the GID form */
	uint32_t srqn;
	int32_t gid_index; /* only carried in the raw (rdma_cm) form */
	uint64_t tail_vaddr; /* 6.29's tail-markers address: the DV text forms only */
};

/* Wire size of a key message: 108 with GID, 59 without. */
size_t pt_key_msg_size(int use_gid);
/* Write the key text plus NUL into buf; returns the bytes to send (59 or
 * 108) or -1 if buf is too small or qpn/psn do not fit in 24 bits. */
int pt_key_encode(const struct pt_key *k, int use_gid, char *buf, size_t len);
/* Strict parse of exactly len bytes (must equal the form's size, be NUL
 * terminated at the end and nowhere else, fixed-width hex fields with ':'
 * separators). Returns 0, or -1 leaving *k zeroed. */
int pt_key_parse(const void *buf, size_t len, int use_gid, struct pt_key *k);
/* The same with dv: 6.29's --data_validation forms (docs/wire-protocol.md
 * §5.2), an extra 16-digit tail_vaddr after vaddr: 76 and 125 bytes. */
size_t pt_key_msg_size_dv(int use_gid, int dv);
int pt_key_encode_dv(const struct pt_key *k, int use_gid, int dv, char *buf, size_t len);
int pt_key_parse_dv(const void *buf, size_t len, int use_gid, int dv, struct pt_key *k);

/* -z / -R: the key travels as the raw "pingpong_dest" struct in big-endian
 * (docs/wire-protocol.md §9.2): 56 bytes up to 6.28, 64 bytes from 6.29 (a tail-marker
 * address after vaddr shifts the GID). Which one is the peer's choice. */
#define PT_CM_KEY_SIZE 56
#define PT_CM_KEY_SIZE_629 64
#define PT_CM_KEY_MAX PT_CM_KEY_SIZE_629
/* Write k in the layout of size layout (56 or 64) into out; returns
 * layout, or -1 for another layout or a QPN/PSN over 24 bits. */
int pt_key_raw_encode(const struct pt_key *k, size_t layout, uint8_t *out);
/* Strict: len must equal layout; LID and outstanding reads fit 16 bits,
 * QPN and PSN 24 bits. 0, or -1 leaving *k zeroed. */
int pt_key_raw_parse(const void *buf, size_t len, size_t layout, struct pt_key *k);

/* Version V: strncpy semantics into a zeroed 16-byte array. */
void pt_version_encode(const char *ver, uint8_t out[PT_VERSION_LEN]);
/* Raw 16 peer bytes -> NUL-terminated string (may contain binary). */
void pt_version_decode(const uint8_t raw[PT_VERSION_LEN],
		       char out[PT_VERSION_LEN + 1]);
/* Copy s into out (always terminated), non-printables replaced by '?'. */
void pt_str_printable(const char *s, char *out, size_t outlen);

/* Everything that depends on the peer's announced version. */
struct pt_peer_rules {
	int known;            /* versions were exchanged */
	char version[PT_VERSION_LEN + 1]; /* raw peer string, terminated */
	char shown[PT_VERSION_LEN + 1];   /* printable copy for messages */
	double ver;           /* atof(version), 0 if not finite */
	int compatible;       /* 1: go on; 0: refuse, see why */
	int sysdata;          /* exchange S1/S2: atof >= 5.32 */
	int mtu_xchg;         /* exchange M at all: (float)atof >= 5.1 */
	size_t mtu_msg_size;  /* 2 iff (float)atof >= 5.31, else 4 */
	size_t iters_size;    /* report iters: 8 iff (float)atof >= 5.33 */
	int peer_is_628plus;  /* atof >= 6.28: a HEAD build would negotiate */
	int negotiate;        /* both sides exchange N (negotiate.h) after M */
	int neg_629;          /* atof >= 6.29: its N carries data_validation */
	size_t cm_key_size;   /* -z/-R raw key: 64 if either side >= 6.29, else 56 */
	int key_dv_629;       /* either side >= 6.29: --data_validation keys are 76/125 */
	char why[192];        /* refusal message when !compatible */
};

/* Fill *r from the peer's version string (NULL: --dont_xchg_versions, no
 * string; assume a compatible modern peer, and skip S/M like upstream).
 * ours is the string we announced. Returns 0 if compatible, else -1. */
int pt_peer_rules_init(struct pt_peer_rules *r, const char *peer,
		       const char *ours);

/* MTU M: "%d" of the ibv_mtu enum (1..5) + NUL padding to msg_size (2 or
 * 4). Returns msg_size, or -1 on a bad mtu/size. */
int pt_mtu_encode(int mtu, size_t msg_size, char *buf);
/* Strict: decimal 1..5 then NUL within len bytes. 0 or -1. */
int pt_mtu_parse(const void *buf, size_t len, int *mtu);
static inline int pt_mtu_min(int local, int remote)
{
	return remote < local ? remote : local;
}

/* Sys data S1/S2: signed 32-bit big-endian. */
void pt_sysdata_encode(int32_t v, uint8_t out[4]);
/* 0, or -1 if the value is <= 0 or > PT_SYSDATA_MAX. */
int pt_sysdata_parse(const uint8_t in[4], int32_t *v);
static inline int32_t pt_sysdata_max(int32_t local, int32_t remote)
{
	return remote > local ? remote : local;
}

/* Big-endian helpers; doubles travel as their byte-swapped IEEE pattern. */
void pt_be32_put(uint32_t v, uint8_t out[4]);
uint32_t pt_be32_get(const uint8_t in[4]);
void pt_be64_put(uint64_t v, uint8_t out[8]);
uint64_t pt_be64_get(const uint8_t in[8]);
void pt_double_put(double d, uint8_t out[8]);
double pt_double_get(const uint8_t in[8]);

/* BW report R: five exchanges in this order, each its own message. */
struct pt_bw_report {
	uint64_t size;
	uint64_t iters;
	double bw_peak;
	double bw_avg;
	double msg_rate;
	/* --report-per-port (group "dual"): four more exchanges after the five,
	 * bw_avg_p1, msgRate_avg_p1, bw_avg_p2, msgRate_avg_p2 (facts §1.7) */
	bool per_port;
	double bw_avg_port[2], msg_rate_port[2];
};
enum pt_bw_field {
	PT_BW_SIZE, PT_BW_ITERS, PT_BW_PEAK, PT_BW_AVG, PT_BW_MSGRATE,
	PT_BW_NFIELDS,
	/* only with per_port, exchanged in this order after the five */
	PT_BW_AVG_P1 = 16, PT_BW_MSGRATE_P1, PT_BW_AVG_P2, PT_BW_MSGRATE_P2
};
/* Encode field f of r into out (8 bytes room); iters_size is 8 or 4.
 * Returns the message size, or -1 for a bad field/width. */
int pt_bw_field_encode(const struct pt_bw_report *r, enum pt_bw_field f,
		       size_t iters_size, uint8_t out[8]);
/* Decode field f from in (the size pt_bw_field_encode gave) into *r. */
int pt_bw_field_decode(struct pt_bw_report *r, enum pt_bw_field f,
		       size_t iters_size, const uint8_t in[8]);

/* Largest believable peak/average/message rate from a peer (MiB/s, Gb/s or
 * Mpps), far beyond any link; the sum with ours must stay finite. */
#define PT_BW_REPORT_MAX 1e12
/* The peer's figures are summed, printed and written to JSON (-b): 0 if
 * peak, average and message rate are finite and in [0, PT_BW_REPORT_MAX],
 * else -1 with the offending field named in why. NaN would print as "nan"
 * and drop the JSON row, a negative value would hide our own result. */
int pt_bw_report_check(const struct pt_bw_report *r, char *why, size_t len);

#endif
