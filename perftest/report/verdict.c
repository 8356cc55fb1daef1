/* SPDX-License-Identifier: BSD-2-Clause */
/* -w/-y verdict, see verdict.h. */
#include <math.h>
#include "verdict.h"

void pt_verdict_init(struct pt_verdict *v, double limit_bw, double limit_msgrate)
{
	*v = (struct pt_verdict){
		.limit_bw = limit_bw, .limit_msgrate = limit_msgrate,
		.min_bw = INFINITY, .min_msgrate = INFINITY,
	};
}

bool pt_verdict_active(const struct pt_verdict *v)
{
	return v->limit_bw >= 0 || v->limit_msgrate >= 0;
}

unsigned pt_verdict_add_bw(struct pt_verdict *v, const struct pt_bw_result *r, FILE *err)
{
	unsigned missed = 0;

	if (!pt_verdict_active(v))
		return 0;
	v->rows++;
	/* written as !(x >= limit) so that NaN fails */
	if (v->limit_bw >= 0) {
		if (!(r->bw_avg >= v->min_bw))
			v->min_bw = r->bw_avg;
		if (!(r->bw_avg >= v->limit_bw)) {
			missed |= PT_LIMIT_BW;
			if (err)
				fprintf(err, " Error: BW result is below bw limit: %.2f < %.2f %s"
					" (-w/--limit_bw, %llu-byte messages)\n", r->bw_avg,
					v->limit_bw, r->gbits ? "Gb/s" : "MiB/s",
					(unsigned long long)r->size);
		}
	}
	if (v->limit_msgrate >= 0) {
		if (!(r->msg_rate >= v->min_msgrate))
			v->min_msgrate = r->msg_rate;
		if (!(r->msg_rate >= v->limit_msgrate)) {
			missed |= PT_LIMIT_MSGRATE;
			if (err)
				fprintf(err, " Error: Msg rate is below msg_rate limit: %.6f < %.6f Mpps"
					" (-y/--limit_msgrate, %llu-byte messages)\n", r->msg_rate,
					v->limit_msgrate, (unsigned long long)r->size);
		}
	}
	v->failed |= missed;
	return missed;
}

bool pt_verdict_pass(const struct pt_verdict *v)
{
	return v->failed == 0;
}
