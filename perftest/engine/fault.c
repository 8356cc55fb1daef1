/* SPDX-License-Identifier: BSD-2-Clause */
/* See fault.h. */
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perftest/wire/oob.h"
#include "fault.h"
#include "loop.h"

bool pt_test_break_rkey;
bool pt_test_break_payload;
int pt_test_stop_stage;

int pt_stage_parse(const char *s)
{
	static const char *const names[] = {
		[PT_STAGE_VERSION] = "version", [PT_STAGE_KEYS] = "keys",
		[PT_STAGE_RUN] = "run", [PT_STAGE_REPORT] = "report",
	};

	if (!s || !*s)
		return PT_STAGE_NONE;
	for (int i = PT_STAGE_VERSION; i <= PT_STAGE_REPORT; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

int pt_test_stop_init(void)
{
	const char *v = getenv("PT_TEST_STOP_AT");
	int st = pt_stage_parse(v);

	if (st < 0) {
		fprintf(stderr, " PT_TEST_STOP_AT=%s: unknown stage (version, keys, run or report)\n", v);
		return -1;
	}
	pt_test_stop_stage = st;
	v = getenv("PT_TEST_BREAK");
	if (v && *v && strcmp(v, "rkey") && strcmp(v, "payload")) {
		fprintf(stderr, " PT_TEST_BREAK=%s: unknown fault (rkey, payload)\n", v);
		return -1;
	}
	pt_test_break_rkey = v && !strcmp(v, "rkey");
	pt_test_break_payload = v && !strcmp(v, "payload");
	return 0;
}

void pt_test_stop(void)
{
	pt_test_stop_stage = PT_STAGE_NONE;
	fflush(stdout);
	raise(SIGSTOP);
}

int pt_fd_peer_closed(int fd)
{
	/* POLLRDHUP: the peer's FIN, seen even behind unread data (a peer that
	 * sent its next message and then died). */
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

	if (fd < 0 || poll(&p, 1, 0) != 1)
		return 0;
	return !!(p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* The out-of-band channel: a TCP socket, or rdma_cm's channel with -z/-R. */
static int oob_closed(void *arg)
{
	const struct pt_oob *o = arg;

	if (o->msg)
		return o->msg->peer_gone && o->msg->peer_gone(o->msg_ctx);
	return pt_fd_peer_closed(o->fd);
}

/* The peer closed or wrote on the OOB socket: it has finished (or was
 * stopped). A poll without waiting. */
static int oob_finished(void *arg)
{
	const struct pt_oob *o = arg;
	struct pollfd pfd = { .fd = o->fd, .events = POLLIN };

	return o->fd >= 0 && poll(&pfd, 1, 0) == 1;
}

void pt_peer_watch_oob(struct pt_peer_watch *w, struct pt_oob *o)
{
	*w = (struct pt_peer_watch){ .closed = oob_closed, .finished = oob_finished, .arg = o };
}

enum pt_idle pt_idle_state(uint64_t idle_ns, uint64_t stall_ns)
{
	if (idle_ns >= stall_ns)
		return PT_IDLE_STALLED;
	return idle_ns >= PT_PEER_PROBE_NS ? PT_IDLE_PROBE : PT_IDLE_WAIT;
}

enum pt_run_state pt_run_idle(const struct pt_peer_watch *peer, uint64_t now,
			      uint64_t last_progress, uint64_t stall_ns)
{
	/* now may predate the last progress (it was read before the poll) */
	if (now <= last_progress)
		return PT_RUN_OK;
	switch (pt_idle_state(now - last_progress, stall_ns)) {
	case PT_IDLE_STALLED:
		return PT_RUN_STALLED;
	case PT_IDLE_PROBE:
		return pt_peer_closed(peer) ? PT_RUN_PEER_GONE : PT_RUN_OK;
	default:
		return PT_RUN_OK;
	}
}

void pt_say_peer_gone(const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	/* one write: the line stays whole when stderr is interleaved */
	fprintf(stderr, " The peer went away during the run (its out-of-band connection closed): %s\n",
		what);
}

void pt_say_partial(bool duration, uint64_t done, uint64_t want, uint64_t elapsed_ns,
		    const char *unit)
{
	if (duration)
		printf(" Partial results: interrupted by signal %d, %llu %s in %.3f s of the"
		       " measured window\n", (int)pt_interrupted, (unsigned long long)done, unit,
		       (double)elapsed_ns / 1e9);
	else
		printf(" Partial results: interrupted by signal %d after %llu of %llu %s\n",
		       (int)pt_interrupted, (unsigned long long)done, (unsigned long long)want, unit);
}

/* A flushed WR only says its QP was already in error: find the completion
 * that put it there, still queued on one of the CQs (each is in order). */
static void flush_cause(const struct pt_res *r)
{
	struct ibv_cq *cqs[2] = { r->send_cq, r->recv_cq };
	struct ibv_wc wc[16];

	for (int k = 0; k < 2; k++) {
		for (int round = 0; cqs[k] && round < 256; round++) {
			int n = ibv_poll_cq(cqs[k], 16, wc);

			if (n <= 0)
				break;
			for (int j = 0; j < n; j++) {
				if (wc[j].status == IBV_WC_SUCCESS || wc[j].status == IBV_WC_WR_FLUSH_ERR)
					continue;
				fprintf(stderr, " Cause, the first other error queued: status %d: %s on QP %d (QPN 0x%06x),"
					" %s WR #%llu (wr_id 0x%llx)\n", wc[j].status,
					ibv_wc_status_str(wc[j].status), pt_wrid_qp(wc[j].wr_id), wc[j].qp_num,
					cqs[k] == r->recv_cq ? "receive" : "send",
					(unsigned long long)pt_wrid_index(wc[j].wr_id),
					(unsigned long long)wc[j].wr_id);
				return;
			}
		}
	}
}

int pt_wc_error(const struct pt_res *r, const struct ibv_wc *wc, const struct pt_wc_where *at,
		const struct pt_peer_watch *peer)
{
	/* Only wr_id, status, qp_num and vendor_err are valid in an error CQE. */
	fprintf(stderr, " Completion with error at %s\n"
		" Failed status %d: %s (vendor_err 0x%x)\n"
		" on QP %d (QPN 0x%06x), %s WR #%llu (wr_id 0x%llx)\n",
		at->side, wc->status, ibv_wc_status_str(wc->status), wc->vendor_err, at->qp,
		wc->qp_num, at->recv ? "receive" : "send", (unsigned long long)at->seq,
		(unsigned long long)wc->wr_id);
	if (!at->recv && at->counts && at->qp >= 0 && at->qp < r->num_qps)
		fprintf(stderr, " scnt=%llu, ccnt=%llu\n", (unsigned long long)r->qps[at->qp].posted,
			(unsigned long long)r->qps[at->qp].completed);
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		flush_cause(r);
	if (pt_peer_closed(peer))
		fprintf(stderr, " The peer's out-of-band connection has closed: it went away during the run\n");
	return -1;
}
