/* SPDX-License-Identifier: BSD-2-Clause */
/* Derived parameters and cross-option rules, applied after all options are
 * read (docs/upstream-behaviour.md §4.1 multicast, §3 defaults). Order matters: the
 * test mode decides iters, iters caps the depths, the depths cap cq_mod. */
#include <stdarg.h>
#include <string.h>
#include "options_int.h"


static const char *conn_name(enum pt_conn_type t)
{
	return t == PT_CONN_RC ? "RC" : t == PT_CONN_UC ? "UC" : "UD";
}

/* -g: UD, one QP, no -b, no -R, a GID (docs/upstream-behaviour.md §4.1). */
static int check_mcast(struct pt_params *p, FILE *err)
{
	/* --reversed makes the server the multicast sender */
	if (p->mcast.connectionless && (!p->mcast.enabled || p->oob.is_client || p->pace.reversed))
		return perr(err, " --connectionless is for a multicast receiver: -g, no server name"
			    " and no --reversed\n");
	if (!p->mcast.enabled) {
		if (p->mcast.mgid_given)
			return perr(err, " -M (--MGID) needs -g (--mcg)\n");
		return 0;
	}
	if (p->tool->verb != PT_VERB_SEND)
		return perr(err, "MultiCast feature only available on SEND verb\n");
	if (p->traffic.bidirectional)
		return perr(err, "Bidirectional mode not supported in multicast\n");
	if (p->conn.num_qps > 1)
		return perr(err, "Only 1 QP supported in multicast\n");
	if (p->conn.rdma_cm_qps)
		return perr(err, " rdma_cm (-R) is not supported in multicast\n");
	if (p->conn.type_given && p->conn.type != PT_CONN_UD)
		return perr(err, " Multicast runs on UD only, not -c %s\n",
			    conn_name(p->conn.type));
	p->conn.type = PT_CONN_UD;
	if (p->dev.gid_index < 0)
		p->dev.gid_index = 0; /* a GRH is required */
	return 0;
}

static int check_connection(struct pt_params *p, FILE *err)
{
	if (p->conn.rdma_cm_qps) {
		if (p->conn.type == PT_CONN_UC)
			return perr(err, " rdma_cm (-R) does not support UC\n");
		p->conn.rdma_cm_oob = true;
	}
	if (p->dev.tos >= 0 && !p->conn.rdma_cm_oob)
		return perr(err, " TOS only valid for rdma_cm based QP and RawEth QP\n");
	if (p->oob.ipv6_addr && p->oob.source_ip[0] && !strchr(p->oob.source_ip, ':'))
		return perr(err, " --bind_source_ip %s is IPv4, but --ipv6-addr asks for IPv6\n",
			    p->oob.source_ip);
	return 0;
}

/* Test method (-a, --run_infinitely) and type (iterations or -D). */
static int check_mode(struct pt_params *p, const struct pt_parse_state *st, FILE *err)
{
	struct pt_traffic_params *t = &p->traffic;

	if (p->tool->verb == PT_VERB_ATOMIC && t->size_given && t->size != PT_ATOMIC_SIZE)
		return perr(err, " Message size of atomic tests is fixed at %u bytes\n",
			    PT_ATOMIC_SIZE);
	if (t->all_sizes && t->run_infinitely)
		return perr(err, " -a and --run_infinitely cannot be combined\n");
	t->duration_given = st->duration_given;
	if (st->duration_given) {
		if (t->all_sizes)
			return perr(err, " Duration mode (-D) cannot be combined with -a\n");
		if (t->use_event)
			return perr(err, " Duration mode (-D) cannot be combined with events (-e)\n");
		if (t->iters_given)
			return perr(err, " -n and -D cannot be combined: give iterations or a duration\n");
		if (!st->margin_given)
			t->margin = t->duration / 4;
		if (t->duration <= 2 * t->margin)
			return perr(err, " Duration %d, margin %d: please check that DURATION > 2*MARGIN\n",
				    t->duration, t->margin);
	} else if (st->margin_given) {
		return perr(err, " -f (--margin) is only valid with -D\n");
	}
	if (t->run_infinitely && t->iters_given)
		return perr(err, " -n and --run_infinitely cannot be combined\n");
	if (st->duration_given || t->run_infinitely) {
		t->test_type = PT_TEST_DURATION;
		t->iters = 0;
	}
	if (t->run_infinitely)
		t->test_method = PT_METHOD_INFINITELY;
	if (t->all_sizes) {
		t->test_method = PT_METHOD_ALL;
		t->size = PT_MAX_SIZE; /* buffers are sized for the largest step */
	}
	/* the limits judge final rows, which an endless run never prints */
	if (t->run_infinitely && (p->report.limit_bw >= 0 || p->report.limit_msgrate >= 0))
		return perr(err, " -w/-y need a run that ends: not with --run_infinitely\n");
	if (p->report.cpu_util && t->test_type != PT_TEST_DURATION)
		return perr(err, " --cpu_util is only valid in duration mode (-D)\n");
	return 0;
}

static int check_output(struct pt_params *p, FILE *err)
{
	bool bw = p->tool->kind == PT_KIND_BW;

	switch (p->report.output) {
	case PT_OUTPUT_BANDWIDTH:
	case PT_OUTPUT_MESSAGE_RATE:
		if (!bw)
			return perr(err, " --output=%s is only valid for bandwidth tests\n",
				    p->report.output == PT_OUTPUT_BANDWIDTH ?
				    "bandwidth" : "message_rate");
		break;
	case PT_OUTPUT_LATENCY:
		if (bw)
			return perr(err, " --output=latency is only valid for latency tests\n");
		break;
	case PT_OUTPUT_FULL:
		break;
	}
	return 0;
}

/* Queue depths, post list and CQ moderation. */
/* Issue 18, memory group: options that contradict each other. */
static int mem_check(const struct pt_params *p, FILE *err)
{
	const struct pt_mem_params *m = &p->mem;

	if (m->mmap_offset && !*m->mmap_file)
		return perr(err, " --mmap-offset needs --mmap\n");
	/* one buffer comes from one place */
	if (*m->mmap_file && m->use_hugepages)
		return perr(err, " --mmap and --use_hugepages cannot be combined: the buffers come"
			    " from the file\n");
	/* a null MR moves no data: there would be nothing to check */
	if (m->null_mr && m->data_validation)
		return perr(err, " --use-null-mr and --data_validation cannot be combined: a null MR"
			    " carries no data\n");
	if (m->null_mr && *m->payload_file)
		return perr(err, " --use-null-mr and --payload_file_path cannot be combined: a null MR"
			    " carries no data\n");
	return 0;
}

static int check_depths(struct pt_params *p, FILE *err)
{
	struct pt_traffic_params *t = &p->traffic;
	bool iterations = t->test_type == PT_TEST_ITERATIONS;
	bool send = pt_recv_verb(p);
	bool ud_uc = p->conn.type == PT_CONN_UD || p->conn.type == PT_CONN_UC;

	/* WRITE_IMM consumes receives like SEND: upstream's SEND depth (512) */
	if (p->tool->verb == PT_VERB_WRITE && t->with_imm && !t->rx_depth_given)
		t->rx_depth = 512;
	if (iterations) {
		if (t->post_list > 1 && t->iters % (uint64_t)t->post_list)
			return perr(err, " Number of iterations (%llu) must be a multiple of"
				    " the post list size (%d)\n",
				    (unsigned long long)t->iters, t->post_list);
		if ((uint64_t)t->tx_depth > t->iters)
			t->tx_depth = (int)t->iters;
		if ((uint64_t)t->rx_depth > t->iters)
			t->rx_depth = (int)t->iters;
		/* UD/UC drop what finds no receive: pre-post them all */
		if (send && ud_uc && !t->rx_depth_given)
			t->rx_depth = t->iters < PT_UD_UC_MAX_RX_DEPTH ? (int)t->iters :
				      PT_UD_UC_MAX_RX_DEPTH;
	}
	if (p->tool->verb == PT_VERB_SEND && t->test_method == PT_METHOD_REGULAR && (t->rx_depth & 1))
		t->rx_depth++;
	/* upstream refuses a partial last list too (docs/option-parity.md) */
	if (t->recv_post_list > 1 && t->iters % (uint64_t)t->recv_post_list)
		return perr(err, " Number of iterations (%llu) must be a multiple of --recv_post_list (%d)\n",
			    (unsigned long long)t->iters, t->recv_post_list);
	/* a list is reposted once all its WRs are consumed: the queue must hold one */
	if (t->recv_post_list > t->rx_depth)
		return perr(err, " --recv_post_list (%d) must not exceed the receive depth (-r %d)\n",
			    t->recv_post_list, t->rx_depth);
	/* the SRQ's rx_depth entries are shared: each QP pre-posts its part */
	if (t->use_srq && t->rx_depth < p->conn.num_qps)
		return perr(err, " --use-srq: the SRQ depth (-r %d) must be at least the number of"
			    " QPs (%d)\n", t->rx_depth, p->conn.num_qps);
	if (mem_check(p, err))
		return 1;
	if (t->post_list > t->tx_depth)
		return perr(err, " Post list size (%d) must not exceed the TX depth (%d)\n",
			    t->post_list, t->tx_depth);

	if (t->size > PT_BIG_MSG_SIZE && p->tool->kind == PT_KIND_BW) {
		if (!t->cq_mod_given && p->conn.type != PT_CONN_UD && !t->all_sizes &&
		    !t->use_event)
			t->cq_mod = 1;
		else if (t->cq_mod_given && t->cq_mod > 1)
			fprintf(err, " Warning: CQ moderation %d with messages of %llu bytes"
				" may exhaust the send queue\n", t->cq_mod,
				(unsigned long long)t->size);
	}
	if (t->post_list > 1) {
		if (!t->cq_mod_given)
			t->cq_mod = t->post_list;
		else if (t->post_list % t->cq_mod)
			return perr(err, " Post list size (%d) must be a multiple of the CQ"
				    " moderation (%d)\n", t->post_list, t->cq_mod);
	}
	if (t->cq_mod > t->tx_depth)
		t->cq_mod = t->tx_depth;
	return 0;
}

/* When the BW peak is not measured (docs/upstream-behaviour.md §3). */
static void check_no_peak(struct pt_params *p, FILE *err)
{
	struct pt_traffic_params *t = &p->traffic;

	if (p->tool->kind != PT_KIND_BW)
		return;
	if (t->test_type == PT_TEST_DURATION) {
		p->report.no_peak = true;
	} else if (t->iters > PT_NO_PEAK_ITERS && !p->report.no_peak) {
		fprintf(err, " WARNING: BW peak won't be measured in this run.\n");
		p->report.no_peak = true;
	}
	/* the SEND receiver only timestamps the first and last message */
	if (pt_recv_verb(p) && !pt_bw_sender_side(p) && !t->bidirectional)
		p->report.no_peak = true;
}

/* pace: the rate limiter's options go together; HW is upstream's default
 * type; PP needs mlx5 direct verbs. The device's caps are checked once it is
 * open (perftest/engine/pace.c), still before any traffic. */
static int check_pace(struct pt_params *p, const struct pt_parse_state *st, FILE *err)
{
	struct pt_pace_params *r = &p->pace;

	if (r->rate_limit <= 0) {
		if (st->rate_limit_type_given || r->rate_units_given || st->burst_size_given ||
		    st->typical_pkt_size_given)
			return perr(err, " --rate_limit_type, --rate_units, --burst_size and"
				    " --typical_pkt_size need --rate_limit\n");
		r->limit_type = PT_RATE_LIMIT_OFF;
	} else if (!st->rate_limit_type_given) {
		r->limit_type = PT_RATE_LIMIT_HW;
	}
	if (r->limit_type == PT_RATE_LIMIT_PP)
		return perr(err, " --rate_limit_type PP needs mlx5 packet pacing indexes"
			    " (mlx5dv_pp_alloc): not supported by this build\n");
	/* upstream refuses this pair itself (docs/option-parity.md, "Combinations
	 * upstream refuses"): refused the same way, before the device is opened */
	if (r->limit_type == PT_RATE_LIMIT_HW && p->conn.rdma_cm_qps)
		return perr(err, " The HW rate limiter (--rate_limit_type HW, the default type) is not"
			    " allowed with rdma_cm QPs (-R), as in upstream perftest:"
			    " use --rate_limit_type SW\n");
	if (r->limit_type == PT_RATE_LIMIT_HW && r->rate_units == PT_RATE_PPS)
		return perr(err, " --rate_units p (messages/s) is not supported by the HW rate limiter:"
			    " use --rate_limit_type SW or M/g units\n");
	if (r->limit_type == PT_RATE_LIMIT_SW && st->typical_pkt_size_given)
		return perr(err, " --typical_pkt_size is for the HW rate limiter, not SW\n");
	if (r->limit_type == PT_RATE_LIMIT_SW && !r->burst_size)
		r->burst_size = p->traffic.tx_depth;
	return 0;
}

/* group "addr": what needs what (docs/upstream-behaviour.md §13). */
static int check_addr(const struct pt_params *p, FILE *err)
{
	const struct pt_addr_params *a = &p->addr;

	if (a->report_per_port && (!a->dualport || p->traffic.test_type != PT_TEST_DURATION))
		return perr(err, " --report-per-port needs --dualport (-O) and duration mode (-D)\n");
	if (a->dualport && p->conn.rdma_cm_qps)
		return perr(err, " --dualport (-O) cannot be combined with rdma_cm (-R)\n");
	if (a->dualport && p->mcast.enabled)
		return perr(err, " --dualport (-O) cannot be combined with multicast (-g)\n");
	return 0;
}

/* Placement and the completion vector (helper numa): the rules that need no device. */
static int check_placement(const struct pt_params *p, FILE *err)
{
	/* upstream: the vector is the completion channel's, so only with events */
	if (p->vector_given && !p->traffic.use_event)
		return perr(err, " -X/--vector %d needs -e (events): without a completion channel"
			    " there is no vector to choose\n", p->comp_vector);
	if (p->disable_numa && p->numa_node >= 0)
		return perr(err, " --numa_node %d and --disable_numa contradict each other\n",
			    p->numa_node);
	return 0;
}

int pt_options_check(struct pt_params *p, const struct pt_parse_state *st, FILE *err)
{
	if (check_mcast(p, err) || check_connection(p, err) || check_mode(p, st, err) ||
	    check_output(p, err) || check_depths(p, err) || check_pace(p, st, err) ||
	    check_addr(p, err) || check_placement(p, err))
		return 1;
	check_no_peak(p, err);
	return 0;
}
