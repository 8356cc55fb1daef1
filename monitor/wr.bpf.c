// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `rdmamon wr`'s BPF side: the perftest:* USDT probes of our tools
 * (docs/usdt.md), attached by libbpf's USDT support (usdt.bpf.h reads each
 * argument where the probe's note says it lives). Counts per process and
 * QP in per-CPU maps, so a probe hit takes no lock and no atomic; user
 * space reads the maps each interval (wr_run.c). */
#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <asm/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>
#include "wr.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, RM_WR_MAX_QPS);
	__type(key, struct rm_wr_qp_key);
	__type(value, struct rm_wr_qp_val);
} wr_qps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RM_WR_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct rm_wr_run_val);
} wr_runs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WR_LOST_NSLOTS);
	__type(key, __u32);
	__type(value, __u64);
} wr_lost SEC(".maps");

static __always_inline void lost(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&wr_lost, &slot);

	if (v)
		(*v)++;
}

/* This CPU's copy of the QP's counters, created (zero) on first sight. */
static __always_inline struct rm_wr_qp_val *qp_of(__u64 qpn, __u64 qp_index)
{
	struct rm_wr_qp_key k = { .pid = bpf_get_current_pid_tgid() >> 32, .qpn = (__u32)qpn };
	struct rm_wr_qp_val *v = bpf_map_lookup_elem(&wr_qps, &k);

	if (v)
		return v;
	struct rm_wr_qp_val zero = { .qp_index = qp_index };

	/* fails when another CPU created it meanwhile (found next) or the map is full */
	bpf_map_update_elem(&wr_qps, &k, &zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&wr_qps, &k);
	if (!v)
		lost(WR_LOST_QP_MAP);
	return v;
}

SEC("usdt")
int BPF_USDT(wr_post, __u64 qp, __u64 qpn, __u64 seq, __u64 count)
{
	struct rm_wr_qp_val *v = qp_of(qpn, qp);

	(void)seq;
	if (v) {
		v->post_calls++;
		v->posted += count;
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(wr_post_recv, __u64 qp, __u64 qpn, __u64 seq, __u64 count)
{
	struct rm_wr_qp_val *v = qp_of(qpn, qp);

	(void)seq;
	if (v)
		v->recv_posted += count;
	return 0;
}

SEC("usdt")
int BPF_USDT(wr_complete, __u64 qp, __u64 qpn, __u64 seq, __u64 wr_id, __u64 status)
{
	struct rm_wr_qp_val *v = qp_of(qpn, qp);

	(void)wr_id;
	if (!v)
		return 0;
	v->completed++;
	v->complete_errors += status != 0;
	if (seq + 1 > v->last_seq1)
		v->last_seq1 = seq + 1;
	return 0;
}

SEC("usdt")
int BPF_USDT(wr_complete_recv, __u64 qp, __u64 qpn, __u64 seq, __u64 wr_id, __u64 status)
{
	struct rm_wr_qp_val *v = qp_of(qpn, qp);

	(void)seq;
	(void)wr_id;
	if (v) {
		v->recv_completed++;
		v->recv_errors += status != 0;
	}
	return 0;
}

static __always_inline struct rm_wr_run_val *run_of(void)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct rm_wr_run_val *v = bpf_map_lookup_elem(&wr_runs, &pid);

	if (v)
		return v;
	struct rm_wr_run_val zero = {};

	bpf_get_current_comm(zero.comm, sizeof(zero.comm));
	bpf_map_update_elem(&wr_runs, &pid, &zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&wr_runs, &pid);
	if (!v)
		lost(WR_LOST_RUN_MAP);
	return v;
}

SEC("usdt")
int BPF_USDT(wr_run_start, __u64 run, __u64 qps, __u64 msg_size, __u64 iters)
{
	struct rm_wr_run_val *v = run_of();

	if (v) {
		__sync_fetch_and_add(&v->started, 1);
		v->run = run;
		v->qps = qps;
		v->msg_size = msg_size;
		v->iters = iters;
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(wr_run_end, __u64 run, __s64 status, __u64 elapsed_ns)
{
	struct rm_wr_run_val *v = run_of();

	if (v) {
		__sync_fetch_and_add(&v->ended, 1);
		if (status)
			__sync_fetch_and_add(&v->failed, 1);
		v->run = run;
		v->elapsed_ns = elapsed_ns;
	}
	return 0;
}
