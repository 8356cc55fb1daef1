/* SPDX-License-Identifier: BSD-2-Clause */
/* The out-of-band session every tool shares (docs/wire-protocol.md §6): connect, preamble
 * (version, sys data, MTU), key exchanges and barriers, and what is printed
 * about them. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "engine.h"
#include "perftest/report/report.h"
#include "perftest/report/json.h"
#include "perftest/wire/cm.h"
#include "fault.h"
#include "counters.h"
#include "util/tsc.h"

_Static_assert((int)PT_OUTPUT_BANDWIDTH == (int)PT_REPORT_BANDWIDTH &&
	       (int)PT_OUTPUT_MESSAGE_RATE == (int)PT_REPORT_MSG_RATE &&
	       (int)PT_OUTPUT_LATENCY == (int)PT_REPORT_LATENCY, "output enums differ");

static bool full_output(const struct pt_ctx *c)
{
	return c->p->report.output == PT_OUTPUT_FULL;
}

static int oob_fail(struct pt_ctx *c, const char *what)
{
	fprintf(stderr, " %s: %s\n", what, pt_oob_strerror(&c->peer.oob));
	return -1;
}

int pt_session_start(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	struct pt_oob *o = &c->peer.oob;
	int32_t page = c->run.page_size, line = c->run.cache_line;
	int mtu = (int)c->run.mtu;
	bool cm = p->conn.rdma_cm_oob;   /* -z (and -R): messages over rdma_cm */
	int family = p->oob.ipv6_addr ? AF_INET6 : AF_UNSPEC;   /* --ipv6-addr */

	pt_oob_set_timeout(o, p->oob.timeout_sec ? p->oob.timeout_sec * 1000 : -1);
	pt_oob_set_source(o, p->oob.source_ip[0] ? p->oob.source_ip : NULL);
	o->data_validation = p->mem.data_validation;   /* 6.29 key forms (wire.h) */
	if (p->oob.fake_version[0])
		pt_oob_set_version(o, p->oob.fake_version);
	if (p->oob.is_client) {
		if (cm ? pt_cm_oob_connect(o, p->oob.servername, p->oob.port, family,
					   o->connect_timeout_ms, p->dev.tos, o->err, sizeof(o->err))
		       : pt_oob_connect(o, p->oob.servername, p->oob.port, family))
			return oob_fail(c, "Couldn't connect to the server");
	} else {
		if (cm ? pt_cm_oob_listen(o, p->oob.port, family, o->err, sizeof(o->err))
		       : pt_oob_listen(o, NULL, p->oob.port, family))
			return oob_fail(c, "Couldn't listen");
		if (full_output(c))
			printf("\n************************************\n"
			       "* Waiting for client to connect... *\n"
			       "************************************\n");
		fflush(stdout);
		if (cm ? pt_cm_oob_accept(o, o->connect_timeout_ms, o->err, sizeof(o->err))
		       : pt_oob_accept(o))
			return oob_fail(c, "No client connected");
	}
	PT_TEST_STOP(PT_STAGE_VERSION);
	if (pt_oob_xchg_versions(o, p->oob.dont_xchg_versions)) {
		if (o->peer.why[0])
			fprintf(stderr, " %s\n", o->peer.why);
		else
			oob_fail(c, "Version exchange failed");
		return -1;
	}
	if (o->peer.sysdata && pt_oob_xchg_sysdata(o, &page, &line))
		return oob_fail(c, "Failed to exchange page size and cache line with the peer");
	c->run.page_size = page;
	c->run.cache_line = line;
	if (o->peer.mtu_xchg) {
		if (pt_oob_xchg_mtu(o, &mtu))
			return oob_fail(c, "Failed to exchange the MTU with the peer");
		c->run.mtu = (enum ibv_mtu)mtu;
	}
	return 0;
}

/* Our side of N in upstream's terms (docs/wire-protocol.md §7.3). Upstream keeps a
 * duration even when -D is not given (--run_infinitely's period, 5 s).
 * The atomic type is FETCH_AND_ADD (or -A's) in the atomic tools only; the
 * others leave the field zero (CMP_AND_SWAP), and a 6.28 peer refuses any
 * other value from them. */
void pt_session_negotiate_fill(const struct pt_ctx *c, struct pt_negotiate *n)
{
	static const int verbs[] = {
		[PT_VERB_SEND] = PT_NEG_SEND, [PT_VERB_WRITE] = PT_NEG_WRITE,
		[PT_VERB_READ] = PT_NEG_READ, [PT_VERB_ATOMIC] = PT_NEG_ATOMIC,
	};
	const struct pt_params *p = c->p;
	const struct pt_traffic_params *t = &p->traffic;
	/* --run_infinitely alone turns to duration mode only in upstream's
	 * loop, after N: until then it is an iteration run of the default count */
	bool endless = t->run_infinitely && !t->duration_given;
	bool timed = t->test_type == PT_TEST_DURATION && !endless;

	memset(n, 0, sizeof(*n));
	n->v[PT_NEG_TEST_METHOD] = t->test_method;
	n->v[PT_NEG_CONNECTION] = p->conn.type == PT_CONN_UD ? PT_NEG_UD :
				  p->conn.type == PT_CONN_UC ? PT_NEG_UC : PT_NEG_RC;
	n->v[PT_NEG_VERB] = verbs[p->tool->verb] + (t->with_imm ? 1 : 0); /* SEND_IMM, WRITE_IMM */
	n->v[PT_NEG_TST] = p->tool->kind == PT_KIND_BW ? PT_NEG_BW : PT_NEG_LAT;
	n->v[PT_NEG_ATOMIC_TYPE] = p->tool->verb == PT_VERB_ATOMIC &&
				   t->atomic_type == PT_ATOMIC_FETCH_AND_ADD ?
				   PT_NEG_FETCH_AND_ADD : PT_NEG_CMP_AND_SWAP;
	n->v[PT_NEG_TEST_TYPE] = timed ? PT_NEG_DURATION : PT_NEG_ITERATIONS;
	n->v[PT_NEG_REPORT_FMT] = p->report.gbits ? PT_NEG_GBS : PT_NEG_MBS;
	/* -a allocates for the largest size, after the UD clamp to the MTU */
	n->v[PT_NEG_SIZE_F] = (int64_t)(t->all_sizes ? c->run.max_size : c->run.size);
	n->v[PT_NEG_ITERS] = timed ? 0 : endless ? (int64_t)p->tool->default_iters :
			     (int64_t)t->iters;
	n->v[PT_NEG_NUM_QPS] = c->res.num_qps;
	n->v[PT_NEG_DURATION_S] = t->duration;
	n->v[PT_NEG_USE_RDMA_CM] = p->conn.rdma_cm_oob;
	n->v[PT_NEG_WRITE_WITH_IMM] = p->tool->verb == PT_VERB_WRITE && t->with_imm;
	n->v[PT_NEG_DATA_VALIDATION] = p->mem.data_validation;
	memcpy(n->dev_attr, &c->dev.dev_attr.orig_attr,
	       sizeof(c->dev.dev_attr.orig_attr) < PT_NEG_DEV_ATTR_LEN ?
		       sizeof(c->dev.dev_attr.orig_attr) : PT_NEG_DEV_ATTR_LEN);
}

int pt_session_negotiate(struct pt_ctx *c)
{
	enum pt_verb v = c->p->tool->verb;
	struct pt_negotiate mine, theirs;
	char why[256];
	int32_t peer_rd;

	if (!c->peer.oob.peer.negotiate || c->p->mcast.connectionless)
		return 0;
	pt_session_negotiate_fill(c, &mine);
	if (pt_oob_xchg_negotiate(&c->peer.oob, &mine, &theirs))
		return oob_fail(c, "Failed to negotiate parameters");
	if (pt_neg_compare(&mine, &theirs, why, sizeof(why))) {
		fprintf(stderr, " %s\n Failed to negotiate parameters (peer perftest %s)\n", why,
			c->peer.oob.peer.shown);
		return -1;
	}
	/* The peer's responder depth bounds our outstanding READs/atomics. */
	memcpy(&peer_rd, theirs.dev_attr + offsetof(struct ibv_device_attr, max_qp_rd_atom),
	       sizeof(peer_rd));
	if ((v == PT_VERB_READ || v == PT_VERB_ATOMIC) && peer_rd > 0 && peer_rd < c->run.out_reads)
		c->run.out_reads = peer_rd;
	return 0;
}

static bool gid_v4(const uint8_t *g)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t pfx_v1[12] = { 0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g, pfx, 12) || !memcmp(g, pfx_v1, 12);
}

static void my_key(struct pt_ctx *c, int i)
{
	pt_key_fill(c, i, &c->peer.my_keys[i]);
	/* A multicast receiver advertises the group, not its QP (docs/wire-protocol.md §10). */
	if (c->mcast.attached) {
		memcpy(c->peer.my_keys[i].gid, c->mcast.mgid, 16);
		c->peer.my_keys[i].qpn = PT_MCAST_QPN;
		c->peer.my_keys[i].lid = 0;
	}
}

static void print_key(struct pt_ctx *c, const struct pt_key *k, bool remote)
{
	enum pt_verb v = c->p->tool->verb;
	/* labelled as upstream does, in send_lat too: the receiver's keys
	 * "MGID" (the server's, the client's with --reversed) */
	bool mcast_side = c->p->mcast.enabled && (remote == pt_bw_sender_side(c->p));
	struct pt_addr_print a = {
		.remote = remote,
		.lid = k->lid,
		.out_reads = k->out_reads,
		.qpn = k->qpn,
		.psn = k->psn,
		.rkey = k->rkey,
		.vaddr = k->vaddr,
		.show_out = v == PT_VERB_READ,
		/* a WRITE_IMM peer's region is still its target, but upstream hides it */
		.show_rkey_vaddr = v == PT_VERB_READ || (v == PT_VERB_WRITE && !c->p->traffic.with_imm),
		.show_gid = c->dev.gid_index >= 0 || mcast_side,
		.gid_is_mgid = mcast_side,
	};

	memcpy(a.gid, k->gid, 16);
	if (full_output(c))
		pt_report_address(stdout, &a);
}

void pt_session_print_keys(struct pt_ctx *c, bool remote)
{
	for (int i = 0; i < c->res.num_qps; i++)
		print_key(c, remote ? &c->peer.rem_keys[i] : &c->peer.my_keys[i], remote);
}

int pt_session_xchg_keys(struct pt_ctx *c, bool print)
{
	for (int i = 0; i < c->res.num_qps; i++)
		my_key(c, i);
	if (print)
		pt_session_print_keys(c, false);
	PT_TEST_STOP(PT_STAGE_KEYS);
	for (int i = 0; i < c->res.num_qps; i++) {
		if (pt_oob_xchg_key(&c->peer.oob, c->peer.use_gid, &c->peer.my_keys[i], &c->peer.rem_keys[i]))
			return oob_fail(c, "Failed to exchange data between server and clients");
		/* --dlid stands for the peer's LID, also where it is printed */
		if (c->p->addr.dlid)
			c->peer.rem_keys[i].lid = (uint16_t)c->p->addr.dlid;
		if (print)
			print_key(c, &c->peer.rem_keys[i], true);
	}
	if (c->peer.use_gid && gid_v4(c->peer.my_keys[0].gid) != gid_v4(c->peer.rem_keys[0].gid)) {
		fprintf(stderr, " Found Incompatibility issue with GID types.\n"
			" Both sides must use IPv4-mapped GIDs or neither (check -x and -M).\n");
		return -1;
	}
	return 0;
}

int pt_session_barrier(struct pt_ctx *c)
{
	if (pt_oob_barrier(&c->peer.oob, c->peer.use_gid, &c->peer.my_keys[0]))
		return oob_fail(c, "Barrier with the peer failed");
	return 0;
}

/* A barrier that waits for the peer's whole run (a write/read/atomic BW
 * server, a read_lat server): no timeout, since a run has no known length,
 * but TCP keepalive ends the wait when the peer's host goes away, and a
 * peer that exits closes the socket. */
int pt_session_wait_peer_run(struct pt_ctx *c)
{
	int saved = c->peer.oob.timeout_ms, rc;

	PT_TEST_STOP(PT_STAGE_RUN);
	pt_oob_keepalive(&c->peer.oob, 10);
	c->peer.oob.timeout_ms = -1;
	rc = pt_oob_barrier(&c->peer.oob, c->peer.use_gid, &c->peer.my_keys[0]);
	c->peer.oob.timeout_ms = saved;
	if (rc == -ECONNRESET || rc == -EPIPE || rc == -ETIMEDOUT)
		return oob_fail(c, "The peer went away during the run");
	return rc ? oob_fail(c, "Barrier with the peer failed") : 0;
}

static const char *verb_name(enum pt_verb v, bool imm)
{
	switch (v) {
	case PT_VERB_WRITE: return imm ? "RDMA_Write_imm" : "RDMA_Write";
	case PT_VERB_READ: return "RDMA_Read";
	case PT_VERB_ATOMIC: return "Atomic";
	default: return imm ? "Send_imm" : "Send";
	}
}

static const char *conn_name(enum pt_conn_type t)
{
	return t == PT_CONN_UD ? "UD" : t == PT_CONN_UC ? "UC" : "RC";
}

int pt_session_print_header(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	const struct pt_traffic_params *t = &p->traffic;
	bool bw = p->tool->kind == PT_KIND_BW;
	bool sender = pt_bw_sender_side(p) || t->bidirectional || !bw;
	bool receiver = !pt_bw_sender_side(p) || t->bidirectional || !bw;
	bool reads = p->tool->verb == PT_VERB_READ || p->tool->verb == PT_VERB_ATOMIC;
	char *name = c->out.test_name;
	const struct pt_place *pl = &c->dev.place;

	snprintf(name, sizeof(c->out.test_name), "%s %s%s%s%s%sTest", verb_name(p->tool->verb, t->with_imm),
		 p->tool->verb == PT_VERB_ATOMIC ?
			 (t->atomic_type == PT_ATOMIC_CMP_AND_SWAP ? "CMP_AND_SWAP " : "FETCH_AND_ADD ") : "",
		 bw && t->bidirectional ? "Bidirectional " : "",
		 bw && t->post_list > 1 ? "Post List " : "", bw ? "BW " : "Latency ",
		 p->mcast.enabled ? "Multicast " : "");
	struct pt_test_info info = {
		.test_name = name,
		.events = t->use_event,
		.events_name = c->dev.devname,
		.events_vector = p->vector_given ? p->comp_vector : 0,
		.mcast_ud = p->mcast.enabled,
		.dual_port = p->addr.dualport,
		.device = c->dev.devname,
		.num_qps = c->res.num_qps,
		.transport = c->dev.verbs->device->transport_type == IBV_TRANSPORT_IWARP ? "IW" : "IB",
		.connection = conn_name(p->conn.type),
		.pcie_relax = p->addr.no_relaxed ? "OFF" : "ON",
		.wr_api = !t->use_old_post_send,
		.tx_depth = sender ? c->run.tx_depth : -1,
		.post_list = t->post_list,
		.recv_post_list = t->recv_post_list,  /* " Recv Post List : N" when > 1 */
		.rx_depth = receiver && pt_recv_verb(p) ? c->run.rx_depth : -1,
		.cq_mod = bw ? c->run.cq_mod : -1,
		.mtu = pt_mtu_bytes(c->run.mtu),
		.link_type = c->dev.is_roce ? "Ethernet" : "IB",
		.gid_index = c->dev.gid_index,
		.outstanding_reads = reads,
		.max_inline = c->run.inline_size,
		.out_reads = c->run.out_reads,
		.rdma_cm_qps = p->conn.rdma_cm_qps,
		.use_srq = c->res.srq != NULL,
		.data_ex_method = p->conn.rdma_cm_oob ? "rdma_cm" : "Ethernet",
		.tos = p->dev.tos,
		/* placement: shown when something was placed or turned off */
		.numa_shown = pl->applied || pl->source == PT_PLACE_DISABLED,
		.numa_node = pt_place_node_str(pl, c->out.numa_node, sizeof(c->out.numa_node)),
		.cpu_affinity = pl->cpus,
		.numa_node_id = pl->node,
		.nic_numa_node = pl->nic_node,
		.numa_source = pt_place_source_name(pl->source),
	};

	c->out.info = info;
	/* -W: the baseline just before the traffic (port_opts.c checked the files) */
	if (p->addr.num_counters) {
		char why[PT_PATH_MAX * 3];

		if (pt_port_counters_snap(c, c->out.counters_before, why, sizeof(why))) {
			fprintf(stderr, " %s\n", why);
			return -1;
		}
	}
	if (full_output(c))
		pt_report_header(stdout, &c->out.info);
	if (p->report.out_json) {
		c->out.json = pt_json_begin(&c->out.info, (enum pt_output_mode)p->report.output);
		if (!c->out.json) {
			fprintf(stderr, " Couldn't start the JSON report\n");
			return -1;
		}
	}
	return 0;
}

void pt_session_bw_row(struct pt_ctx *c, const struct pt_bw_result *r)
{
	enum pt_output out = c->p->report.output;

	if (out == PT_OUTPUT_FULL)
		pt_report_bw_row(stdout, r);
	else
		pt_report_bw_number(stdout, (enum pt_output_mode)out, r);
	fflush(stdout);
	if (c->out.json)
		pt_json_add_bw(c->out.json, r);
}

int pt_session_finish(struct pt_ctx *c)
{
	struct pt_clock_info clk;
	int rc = 0;

	/* -W: what the port counted over the run */
	if (c->p->addr.num_counters) {
		uint64_t after[PT_COUNTERS_MAX];
		char why[PT_PATH_MAX * 3];

		if (pt_port_counters_snap(c, after, why, sizeof(why))) {
			fprintf(stderr, " %s\n", why);
			rc = -1;
		} else {
			pt_counters_print(stdout, c->dev.devname, c->p->dev.ib_port,
					  (const char (*)[PT_PATH_MAX / 8])c->p->addr.counters,
					  c->p->addr.num_counters, c->out.counters_before, after);
		}
	}
	/* the run is over: how far the TSC line drifted from CLOCK_MONOTONIC_RAW */
	pt_clock_check(&clk);
	if (c->out.json && pt_json_set_clock(c->out.json, &clk))
		fprintf(stderr, " Couldn't add the clock to the JSON report\n");
	if (c->out.json && pt_json_write(c->out.json, c->p->report.out_json_file)) {
		fprintf(stderr, " Couldn't write %s\n", c->p->report.out_json_file);
		rc = -1;
	}
	return rc;
}
