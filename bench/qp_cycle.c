// SPDX-License-Identifier: BSD-2-Clause
/* qp-cycle: the time of one QP's control-path life, create -> modify(INIT)
 * -> modify(RTR) -> destroy, on a real device; what bench/monitor-overhead
 * times with and without rdmamon attached.
 *   qp-cycle DEVICE CYCLES [GID_INDEX]
 * The RTR modify connects the QP to itself (its own QPN and GID): a valid
 * RC connection without a peer. The cycles run in slices of SLICE; prints
 * one JSON object: cycles, ns per cycle as the mean, the median slice and
 * the fastest slice (on a shared host running TCG guests, a slice that the
 * host did not interrupt: the cost itself), and the process's CPU time per
 * cycle (user + kernel, where a hook's cost lands). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#define SLICE 4
#define MAX_SLICES 250000

static uint64_t clock_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "qp-cycle: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One cycle; the QP is gone when it returns. */
static void cycle(struct ibv_pd *pd, struct ibv_cq *cq, const union ibv_gid *gid, int gidx,
		  enum ibv_mtu mtu)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		die("ibv_create_qp");
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("ibv_modify_qp INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = qp->qp_num;
	a.rq_psn = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = (uint8_t)gidx;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("ibv_modify_qp RTR");
	if (ibv_destroy_qp(qp))
		die("ibv_destroy_qp");
}

int main(int argc, char **argv)
{
	struct ibv_device **l;
	struct ibv_context *c = NULL;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	static uint64_t slice[MAX_SLICES];
	uint64_t t0, cpu0, total = 0;
	long cycles, n;
	int gidx = 1;
	char *end;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: qp-cycle DEVICE CYCLES [GID_INDEX]\n");
		return 2;
	}
	cycles = strtol(argv[2], &end, 10);
	if (*end || cycles < 4 * SLICE || cycles > (long)MAX_SLICES * SLICE) {
		fprintf(stderr, "qp-cycle: CYCLES '%s' is not a number in %d..%ld\n", argv[2], 4 * SLICE,
			(long)MAX_SLICES * SLICE);
		return 2;
	}
	if (argc == 4) {
		gidx = (int)strtol(argv[3], &end, 10);
		if (*end || gidx < 0 || gidx > 255) {
			fprintf(stderr, "qp-cycle: GID_INDEX '%s' is not in 0..255\n", argv[3]);
			return 2;
		}
	}
	l = ibv_get_device_list(NULL);
	for (int i = 0; l && l[i]; i++)
		if (strcmp(ibv_get_device_name(l[i]), argv[1]) == 0)
			c = ibv_open_device(l[i]);
	if (!c) {
		fprintf(stderr, "qp-cycle: no device %s\n", argv[1]);
		return 1;
	}
	struct ibv_pd *pd = ibv_alloc_pd(c);
	struct ibv_cq *cq = ibv_create_cq(c, 16, NULL, NULL, 0);

	if (!pd || !cq)
		die("ibv_alloc_pd/ibv_create_cq");
	if (ibv_query_port(c, 1, &pa) || ibv_query_gid(c, 1, gidx, &gid))
		die("ibv_query_port/gid");
	n = cycles / SLICE;
	cycle(pd, cq, &gid, gidx, pa.active_mtu);   /* warm: first-call costs out of the figure */
	cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (long s = 0; s < n; s++) {
		t0 = clock_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < SLICE; i++)
			cycle(pd, cq, &gid, gidx, pa.active_mtu);
		slice[s] = clock_ns(CLOCK_MONOTONIC) - t0;
		total += slice[s];
	}
	cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	qsort(slice, (size_t)n, sizeof(slice[0]), cmp_u64);
	printf("{\"cycles\": %ld, \"total_ns\": %llu, \"ns_per_cycle\": %.1f, \"median_ns_per_cycle\": %.1f, "
	       "\"min_ns_per_cycle\": %.1f, \"cpu_ns_per_cycle\": %.1f}\n",
	       n * SLICE, (unsigned long long)total, (double)total / (double)(n * SLICE),
	       (double)slice[n / 2] / SLICE, (double)slice[0] / SLICE, (double)cpu0 / (double)(n * SLICE));
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
	ibv_free_device_list(l);
	return 0;
}
