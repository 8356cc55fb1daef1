/* SPDX-License-Identifier: BSD-2-Clause */
/* What rdmawire prints: the flows' table, retransmitted PSNs, each NAK with
 * the request packet that drew it, and the joined WRs; as text or JSON. */
#ifndef PT_ROCE_REPORT_H
#define PT_ROCE_REPORT_H
#include <stdio.h>
#include "roce_join.h"

struct roce_report_opts {
	bool all_wrs;               /* text: every WR, not only the notable ones */
	const char *trace_path;
	const struct wrt_trace *trace;
};

/* The request packet a NAK answers: the latest transmission of the NAK's
 * PSN before it (its number among that PSN's transmissions), and the latest
 * request packet of the flow before the NAK. */
struct roce_nak_cause {
	const struct roce_rec *named, *latest;
	uint32_t named_tx, named_txs;       /* transmission named_tx of named_txs */
};
void roce_nak_cause(const struct roce_capture *c, const struct roce_flow *resp,
		    const struct roce_rec *nak, struct roce_nak_cause *out);

void roce_report_text(FILE *out, const struct roce_capture *c, const struct roce_join *j,
		      const struct roce_report_opts *o);
/* 0, or -1 when the JSON could not be built or written. */
int roce_report_json(FILE *out, const struct roce_capture *c, const struct roce_join *j,
		     const struct roce_report_opts *o);

#endif
