/* SPDX-License-Identifier: BSD-2-Clause */
/* Text report in the Debian perftest 6.06 layout (docs/upstream-behaviour.md §7).
 *
 * Where the source we worked from wrapped a format string across lines the
 * exact whitespace at the wrap is not recorded; those spots are marked GAP below
 * and filled to keep the columns aligned under the header. */
#include <errno.h>
#include <inttypes.h>

#include "report.h"

static const char *on_off(bool b)
{
	return b ? "ON" : "OFF";
}

static const char *str(const char *s)
{
	return s ? s : "";
}

static int done(FILE *f)
{
	return ferror(f) ? -EIO : 0;
}

int pt_report_result_line(FILE *f)
{
	if (!f)
		return -EINVAL;
	fputs(PT_RESULT_LINE, f);
	return done(f);
}

int pt_report_header(FILE *f, const struct pt_test_info *in)
{
	if (!f || !in)
		return -EINVAL;
	fputs(PT_RESULT_LINE, f);
	fprintf(f, "                    %s\n", str(in->test_name));
	if (in->events)
		fprintf(f, " Test with events. Using %s_comp%d\n",
			str(in->events_name), in->events_vector);
	if (in->mcast_ud)
		fputs(" MultiCast runs on UD!\n", f);
	fprintf(f, " Dual-port       : %s\t\tDevice         : %s\n",
		on_off(in->dual_port), str(in->device));
	fprintf(f, " Number of qps   : %d\t\tTransport type : %s\n",
		in->num_qps, str(in->transport));
	fprintf(f, " Connection type : %s\t\tUsing SRQ      : %s\n",
		str(in->connection), on_off(in->use_srq));
	fprintf(f, " PCIe relax order: %s\n", str(in->pcie_relax));
	fprintf(f, " ibv_wr* API     : %s\n", on_off(in->wr_api));
	if (in->numa_shown)
		fprintf(f, " NUMA node       : %s\t\tCPU affinity   : %s\n", str(in->numa_node),
			str(in->cpu_affinity));
	if (in->tx_depth >= 0)
		fprintf(f, " TX depth        : %d\n", in->tx_depth);
	if (in->post_list > 1)
		fprintf(f, " Post List       : %d\n", in->post_list);
	if (in->recv_post_list > 1)
		fprintf(f, " Recv Post List  : %d\n", in->recv_post_list);
	if (in->rx_depth >= 0)
		fprintf(f, " RX depth        : %d\n", in->rx_depth);
	if (in->cq_mod >= 0)
		fprintf(f, " CQ Moderation   : %d\n", in->cq_mod);
	fprintf(f, " Mtu             : %lu[B]\n", in->mtu);
	fprintf(f, " Link type       : %s\n", str(in->link_type));
	if (in->gid_index >= 0)
		fprintf(f, " GID index       : %d\n", in->gid_index);
	if (in->outstanding_reads)
		fprintf(f, " Outstand reads  : %d\n", in->out_reads);
	else
		fprintf(f, " Max inline data : %d[B]\n", in->max_inline);
	fprintf(f, " rdma_cm QPs\t : %s\n", on_off(in->rdma_cm_qps));
	fprintf(f, " Data ex. method : %s", str(in->data_ex_method));
	if (in->tos >= 0)
		fprintf(f, " \tTOS    : %d", in->tos);
	fputc('\n', f);
	fputs(PT_RESULT_LINE, f);
	return done(f);
}

int pt_report_address(FILE *f, const struct pt_addr_print *a)
{
	const char *side;

	if (!f || !a)
		return -EINVAL;
	side = a->remote ? "remote" : "local";
	fprintf(f, " %s address: LID %#04x QPN %#06x PSN %#06x", side,
		(unsigned)a->lid, (unsigned)a->qpn, (unsigned)a->psn);
	if (a->show_out)
		fprintf(f, " OUT %#04x", (unsigned)a->out_reads);
	if (a->show_rkey_vaddr)
		fprintf(f, " RKey %#08x VAddr %#016llx", (unsigned)a->rkey,
			(unsigned long long)a->vaddr);
	if (a->show_srqn)
		fprintf(f, " SRQn %#08x", (unsigned)a->srqn);
	fputc('\n', f);
	if (a->show_gid) {
		/* Decimal bytes, as perftest prints them. */
		fprintf(f, " %s: ", a->gid_is_mgid ? "MGID" : "GID");
		for (int i = 0; i < 16; i++)
			fprintf(f, "%02d%s", a->gid[i], i < 15 ? ":" : "\n");
	}
	return done(f);
}

/* ------------------------------------------------------------------ BW -- */

int pt_report_bw_header(FILE *f, bool gbits, bool cpu_util)
{
	if (!f)
		return -EINVAL;
	/* GAP: one space inside "BW average". */
	if (gbits)
		fputs(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]", f);
	else
		fputs(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]", f);
	if (cpu_util)
		fputs("    CPU_Util[%]", f);
	fputc('\n', f);
	return done(f);
}

int pt_report_bw_row(FILE *f, const struct pt_bw_result *r)
{
	if (!f || !r)
		return -EINVAL;
	if (r->gbits && r->bw_avg < 0.1)
		/* Six decimals so slow links do not print 0.00. GAP: the
		 * spacing after #iterations follows the normal row. */
		fprintf(f, " %-7lu    %" PRIu64 "       %-7.6lf            %-7.6lf            %-7.6lf",
			(unsigned long)r->size, r->iters, r->bw_peak,
			r->bw_avg, r->msg_rate);
	else
		fprintf(f, " %-7lu    %-10" PRIu64 "       %-7.2lf            %-7.2lf\t\t   %-7.6lf",
			(unsigned long)r->size, r->iters, r->bw_peak,
			r->bw_avg, r->msg_rate);
	if (r->has_cpu_util)
		fprintf(f, "\t    %-3.2f\n", r->cpu_util);
	else
		fputc('\n', f);
	/* --report-per-port: one line per port under the row (the facts give
	 * the figures, not upstream's layout: ours, docs/option-parity.md) */
	for (int k = 0; r->per_port && k < 2; k++)
		fprintf(f, " Port %d: BW average[%s]  %-7.2lf\t MsgRate[Mpps]  %-7.6lf\n", k + 1,
			r->gbits ? "Gb/sec" : "MiB/sec", r->bw_avg_port[k], r->msg_rate_port[k]);
	return done(f);
}

/* ----------------------------------------------------------------- LAT -- */

int pt_report_lat_header(FILE *f)
{
	if (!f)
		return -EINVAL;
	/* Spacing as Debian's 6.06 prints it (two spaces before t_typical). */
	fputs(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
	      "    t_avg[usec]    t_stdev[usec]   99% percentile[usec]"
	      "   99.9% percentile[usec] \n", f);
	return done(f);
}

int pt_report_lat_row(FILE *f, const struct pt_lat_result *r)
{
	if (!f || !r)
		return -EINVAL;
	/* Spacing as Debian's 6.06 prints it (six spaces before t_typical). */
	fprintf(f, " %-7lu %" PRIu64 "          %-7.2f        %-7.2f      %-7.2f"
		"  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
		(unsigned long)r->size, r->iters, r->t_min, r->t_max,
		r->t_typical, r->t_avg, r->t_stdev, r->p99, r->p99_9);
	return done(f);
}

int pt_report_lat_dur_header(FILE *f)
{
	if (!f)
		return -EINVAL;
	/* GAP: one space between the first two columns as in the LAT one. */
	fputs(" #bytes #iterations       t_avg[usec]    tps average\n", f);
	return done(f);
}

int pt_report_lat_dur_row(FILE *f, const struct pt_lat_dur_result *r)
{
	if (!f || !r)
		return -EINVAL;
	/* GAP: four spaces between the two values. */
	fprintf(f, " %-7lu       %" PRIu64 "            %-7.2f    %-7.2f\n",
		(unsigned long)r->size, r->iters, r->t_avg, r->tps);
	return done(f);
}

int pt_report_lat_dur_pct(FILE *f, const struct pt_lat_dur_result *r)
{
	static const char *const label[] = { "t_min", "p50", "p90", "p99", "p99.9", "p99.99",
					     "p99.999", "t_max" };
	char col[24];

	if (!f || !r)
		return -EINVAL;
	if (!r->has_pct)
		return 0;

	const double v[] = { r->t_min, r->p50, r->p90, r->p99, r->p99_9, r->p99_99, r->p99_999,
			     r->max };

	fprintf(f, " Percentiles of the %" PRIu64 " round trips in the measured window"
		" (histogram, at most %.2f%% error):\n", r->samples, 100.0 * pt_hist_max_rel_error());
	fputs(" #bytes #samples   ", f);
	for (unsigned i = 0; i < 8; i++) {
		snprintf(col, sizeof(col), "%s[usec]", label[i]);
		fprintf(f, i < 7 ? "%-15s" : "%s\n", col);
	}
	fprintf(f, " %-7lu %-10" PRIu64 " ", (unsigned long)r->size, r->samples);
	for (unsigned i = 0; i < 8; i++)
		fprintf(f, i < 7 ? "%-15.2f" : "%.2f\n", v[i]);
	return done(f);
}

/* ------------------------------------------------------- bare numbers -- */

int pt_report_bw_number(FILE *f, enum pt_output_mode m,
			const struct pt_bw_result *r)
{
	if (!f || !r)
		return -EINVAL;
	if (m == PT_REPORT_BANDWIDTH)
		fprintf(f, "%lf\n", r->bw_avg);
	else if (m == PT_REPORT_MSG_RATE)
		fprintf(f, "%lf\n", r->msg_rate);
	else
		return -EINVAL;
	return done(f);
}

int pt_report_lat_number(FILE *f, enum pt_output_mode m,
			 const struct pt_lat_result *r)
{
	if (!f || !r || m != PT_REPORT_LATENCY)
		return -EINVAL;
	fprintf(f, "%lf\n", r->t_avg);
	return done(f);
}

int pt_report_lat_dur_number(FILE *f, enum pt_output_mode m,
			     const struct pt_lat_dur_result *r)
{
	if (!f || !r || m != PT_REPORT_LATENCY)
		return -EINVAL;
	fprintf(f, "%lf\n", r->t_avg);
	return done(f);
}
