/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace internals shared by the file writer and reader: one table of the
 * run metadata keys, so both sides always agree. */
#ifndef PT_WRTRACE_INT_H
#define PT_WRTRACE_INT_H
#include <stddef.h>
#include "wrtrace.h"

enum wrt_field_type { WRT_F_U32, WRT_F_U64, WRT_F_STR, WRT_F_DBL, WRT_F_BOOL, WRT_F_ENUM };

struct wrt_field {
	const char *key;
	enum wrt_field_type type;
	size_t off, size;           /* size: buffer size of WRT_F_STR */
	const char *const *names;   /* WRT_F_ENUM: a uint32_t written by name */
	unsigned nnames;
};

extern const struct wrt_field wrt_meta_fields[];
extern const size_t wrt_meta_nfields;

/* The characters of a CSV metadata value: the writer turns any other into
 * '_' (blanks split tokens, '#' starts a metadata line), and the reader
 * refuses them, so what it accepts is written back the same. */
static inline bool wrt_csv_token_char(char c)
{
	return c > ' ' && c < 127 && c != '"' && c != '#';
}

/* CSV column names, in file order. */
#define WRT_CSV_HEADER "run,qp,seq,wr_id,opcode,bytes,signaled,own_cqe,status,t_post_ns," \
	"t_comp_ns,latency_ns,tput_mb_s,cqe_gap_sw_ns,cqe_gap_hw_ns,hw_ns,post_to_cqe_ns,cqe_to_poll_ns"
#define WRT_CSV_NCOLS 18
#define WRT_CSV_MAGIC "# wrtrace 1"

#endif
