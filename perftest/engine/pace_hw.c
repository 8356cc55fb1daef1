/* SPDX-License-Identifier: BSD-2-Clause */
/* The HW rate limiter (--rate_limit_type HW): the device's packet pacing per
 * QP (ibv_modify_qp_rate_limit), checked against its caps when the device
 * opens, before any connection or traffic. rxe has none: a clean refusal. */
#include <stdio.h>
#include <string.h>
#include "util/err.h"
#include "engine.h"

double pt_pace_bytes_ps(const struct pt_pace_params *r)
{
	switch (r->rate_units) {
	case PT_RATE_MIBPS: return r->rate_limit * 1048576.0;
	case PT_RATE_GBPS: return r->rate_limit * 1e9 / 8;
	default: return 0;
	}
}

double pt_pace_kbps(const struct pt_pace_params *r)
{
	return pt_pace_bytes_ps(r) * 8 / 1000;
}

/* The QP types whose bit packet_pacing_caps.supported_qpts carries. */
static bool qpt_paced(const struct ibv_device_attr_ex *a, enum pt_conn_type t)
{
	enum ibv_qp_type qpt = t == PT_CONN_UD ? IBV_QPT_UD : t == PT_CONN_UC ? IBV_QPT_UC : IBV_QPT_RC;

	return a->packet_pacing_caps.supported_qpts & (1u << qpt);
}

int pt_pace_hw_check(const struct pt_params *p, const struct ibv_device_attr_ex *a,
		     const char *devname)
{
	const struct ibv_packet_pacing_caps *pp = &a->packet_pacing_caps;
	double kbps;

	if (p->pace.limit_type != PT_RATE_LIMIT_HW)
		return 0;
	if (!pp->qp_rate_limit_max) {
		fprintf(stderr, " --rate_limit_type HW: %s has no packet pacing"
			" (ibv_query_device_ex: packet_pacing_caps.qp_rate_limit_max 0);"
			" use --rate_limit_type SW\n", devname);
		return -1;
	}
	if (!qpt_paced(a, p->conn.type)) {
		fprintf(stderr, " --rate_limit_type HW: %s paces no QPs of this type"
			" (packet_pacing_caps.supported_qpts 0x%x); use --rate_limit_type SW\n",
			devname, pp->supported_qpts);
		return -1;
	}
	kbps = pt_pace_kbps(&p->pace);
	if (kbps < pp->qp_rate_limit_min || kbps > pp->qp_rate_limit_max) {
		fprintf(stderr, " --rate_limit_type HW: %.0f kb/s is outside %s's packet pacing range"
			" %u..%u kb/s\n", kbps, devname, pp->qp_rate_limit_min, pp->qp_rate_limit_max);
		return -1;
	}
	return 0;
}

int pt_pace_hw_apply(const struct pt_params *p, struct ibv_qp *qp, int i)
{
	struct ibv_qp_rate_limit_attr a;
	int rc;

	if (p->pace.limit_type != PT_RATE_LIMIT_HW)
		return 0;
	memset(&a, 0, sizeof(a));
	a.rate_limit = (uint32_t)pt_pace_kbps(&p->pace);
	a.max_burst_sz = (uint32_t)p->pace.burst_size;   /* 0: the device's default */
	a.typical_pkt_sz = (uint16_t)p->pace.typical_pkt_size;
	rc = ibv_modify_qp_rate_limit(qp, &a);
	if (rc) {
		pt_err_call("ibv_modify_qp_rate_limit", pt_err_code(rc),
			    "Couldn't set the HW rate limit of QP %d to %u kb/s", i, a.rate_limit);
		return -1;
	}
	return 0;
}
