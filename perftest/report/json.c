/* SPDX-License-Identifier: BSD-2-Clause */
/* --out_json accumulator; layout documented in json.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "json.h"
#include "verdict.h"
#include "util/tsc.h"

struct pt_json {
	json_t *info; /* "test_info" */
	json_t *rows; /* "all_results"; "results" is its last element */
	json_t *limits; /* "limits": -w/-y and their verdict, NULL without */
	enum pt_output_mode mode;
};

/* Pretty enough to read, and no 0.1 -> 0.10000000000000001 noise. */
#define PT_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(15))

static const char *on_off(bool b)
{
	return b ? "ON" : "OFF";
}

/* Each setter returns non-zero on failure so calls can be OR-ed together. */
static int set_str(json_t *o, const char *k, const char *v)
{
	return json_object_set_new(o, k, json_string(v ? v : "")) != 0;
}

static int set_int(json_t *o, const char *k, long long v)
{
	return json_object_set_new(o, k, json_integer(v)) != 0;
}

static int set_real(json_t *o, const char *k, double v)
{
	return json_object_set_new(o, k, json_real(v)) != 0;
}

static json_t *test_info(const struct pt_test_info *in)
{
	json_t *o = json_object();
	char *name;
	int err = 0;

	if (!o)
		return NULL;
	/* "Send BW Test" -> "Send_BW_Test", as upstream names the test. */
	name = strdup(in->test_name ? in->test_name : "");
	if (!name) {
		json_decref(o);
		return NULL;
	}
	for (char *p = name; *p; p++)
		if (*p == ' ')
			*p = '_';
	err |= set_str(o, "test", name);
	free(name);
	if (in->events) {
		char buf[128];

		snprintf(buf, sizeof(buf), "%s_comp%d",
			 in->events_name ? in->events_name : "",
			 in->events_vector);
		err |= set_str(o, "Test with events", buf);
	}
	if (in->mcast_ud)
		err |= set_str(o, "MultiCast_runs", "on_UD");
	err |= set_str(o, "Dual_port", on_off(in->dual_port));
	err |= set_str(o, "Device", in->device);
	err |= set_int(o, "Number_of_qps", in->num_qps);
	err |= set_str(o, "Transport_type", in->transport);
	err |= set_str(o, "Connection_type", in->connection);
	err |= set_str(o, "Using_SRQ", on_off(in->use_srq));
	err |= set_str(o, "PCIe_relax_order", in->pcie_relax);
	err |= set_str(o, "ibv_wr_API", on_off(in->wr_api));
	if (in->tx_depth >= 0)
		err |= set_int(o, "TX_depth", in->tx_depth);
	if (in->post_list > 1)
		err |= set_int(o, "Post_List", in->post_list);
	if (in->recv_post_list > 1)
		err |= set_int(o, "Recv_Post_List", in->recv_post_list);
	if (in->rx_depth >= 0)
		err |= set_int(o, "RX_depth", in->rx_depth);
	if (in->cq_mod >= 0)
		err |= set_int(o, "CQ_Moderation", in->cq_mod);
	err |= set_int(o, "Mtu", (long long)in->mtu);
	err |= set_str(o, "Link_type", in->link_type);
	if (in->gid_index >= 0)
		err |= set_int(o, "GID_index", in->gid_index);
	if (in->outstanding_reads)
		err |= set_int(o, "Outstand_reads", in->out_reads);
	else
		err |= set_int(o, "Max_inline_data", in->max_inline);
	err |= set_str(o, "rdma_cm_QPs", on_off(in->rdma_cm_qps));
	/* Always present upstream; no accelerator memory here. */
	err |= set_str(o, "Use_ROCm_memory", "OFF");
	err |= set_str(o, "Use_MUSA_memory", "OFF");
	err |= set_str(o, "Data_ex_method", in->data_ex_method);
	if (in->tos >= 0)
		err |= set_int(o, "TOS", in->tos);
	/* placement: additive fields, always present (docs/option-parity.md) */
	err |= set_int(o, "NUMA_node", in->numa_node_id);
	err |= set_int(o, "NIC_NUMA_node", in->nic_numa_node);
	err |= set_str(o, "NUMA_source", in->numa_source ? in->numa_source : "none");
	err |= set_str(o, "CPU_affinity", in->cpu_affinity ? in->cpu_affinity : "");
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

struct pt_json *pt_json_begin(const struct pt_test_info *info,
			      enum pt_output_mode mode)
{
	struct pt_json *j;

	if (!info)
		return NULL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->mode = mode;
	j->info = test_info(info);
	j->rows = json_array();
	if (!j->info || !j->rows) {
		pt_json_free(j);
		return NULL;
	}
	return j;
}

/* Takes ownership of row (also on failure); err: a setter failed. */
static int add_row(struct pt_json *j, json_t *row, int err)
{
	if (!row)
		return -ENOMEM;
	if (err) {
		json_decref(row);
		return -ENOMEM;
	}
	return json_array_append_new(j->rows, row) ? -ENOMEM : 0;
}

static json_t *row_head(uint64_t size, int *err)
{
	json_t *o = json_object();

	if (o)
		*err |= set_int(o, "MsgSize", (long long)size);
	return o;
}

int pt_json_set_verdict(struct pt_json *j, const struct pt_verdict *v)
{
	json_t *o, *failed;
	int err = 0;

	if (!j || !v)
		return -EINVAL;
	o = json_object();
	failed = json_array();
	if (!o || !failed) {
		json_decref(o);
		json_decref(failed);
		return -ENOMEM;
	}
	if (v->limit_bw >= 0) {
		err |= set_real(o, "limit_bw", v->limit_bw);
		if (v->rows)
			err |= set_real(o, "lowest_BW_average", v->min_bw);
	}
	if (v->limit_msgrate >= 0) {
		err |= set_real(o, "limit_msgrate", v->limit_msgrate);
		if (v->rows)
			err |= set_real(o, "lowest_MsgRate", v->min_msgrate);
	}
	if (v->failed & PT_LIMIT_BW)
		err |= json_array_append_new(failed, json_string("limit_bw")) != 0;
	if (v->failed & PT_LIMIT_MSGRATE)
		err |= json_array_append_new(failed, json_string("limit_msgrate")) != 0;
	err |= set_int(o, "rows_checked", v->rows);
	err |= json_object_set_new(o, "failed", failed) != 0;
	err |= json_object_set_new(o, "pass", json_boolean(pt_verdict_pass(v))) != 0;
	if (err) {
		json_decref(o);
		return -ENOMEM;
	}
	json_decref(j->limits);
	j->limits = o;
	return 0;
}

int pt_json_set_clock(struct pt_json *j, const struct pt_clock_info *ci)
{
	json_t *o;
	int err = 0;

	if (!j || !ci)
		return -EINVAL;
	o = json_object();
	if (!o)
		return -ENOMEM;
	err |= set_str(o, "source", ci->source);
	err |= set_str(o, "sw_clock", ci->sw_clock);
	if (ci->ns_per_tick > 0) {
		err |= set_real(o, "ns_per_tick", ci->ns_per_tick);
		err |= set_real(o, "calibration_ms", (double)ci->calib_ns / 1e6);
		err |= set_int(o, "start_samples", ci->start_samples);
		err |= set_real(o, "start_residual_max_ns", ci->start_residual_max_ns);
		err |= set_real(o, "start_residual_rms_ns", ci->start_residual_rms_ns);
		err |= set_real(o, "slope_err_ppm", ci->slope_err_ppm);
	} else {
		err |= set_str(o, "fallback", ci->why);
	}
	if (ci->checked) {
		err |= set_int(o, "end_samples", ci->end_samples);
		err |= set_real(o, "residual_ns", ci->residual_max_ns);
		err |= set_real(o, "residual_rms_ns", ci->residual_rms_ns);
		err |= set_real(o, "end_bracket_ns", ci->bracket_ns);
		err |= set_real(o, "drift_ppm", ci->drift_ppm);
		err |= set_real(o, "span_s", (double)ci->span_ns / 1e9);
	}
	if (err) {
		json_decref(o);
		return -ENOMEM;
	}
	return json_object_set_new(j->info, "clock", o) ? -ENOMEM : 0;
}

int pt_json_add_bw(struct pt_json *j, const struct pt_bw_result *r)
{
	json_t *o;
	int err = 0;

	if (!j || !r || j->mode == PT_REPORT_LATENCY)
		return -EINVAL;
	o = row_head(r->size, &err);
	if (!o)
		return -ENOMEM;
	if (j->mode == PT_REPORT_BANDWIDTH) {
		err |= set_real(o, "bw_avg", r->bw_avg);
	} else if (j->mode == PT_REPORT_MSG_RATE) {
		err |= set_real(o, "msgRate_avg", r->msg_rate);
	} else {
		err |= set_int(o, "n_iterations", (long long)r->iters);
		err |= set_real(o, "BW_peak", r->bw_peak);
		err |= set_real(o, "BW_average", r->bw_avg);
		err |= set_real(o, "MsgRate", r->msg_rate);
		err |= set_str(o, "BW_units", r->gbits ? "Gb/s" : "MiB/s");
		if (r->has_cpu_util)
			err |= set_real(o, "CPU_util", r->cpu_util);
		if (r->per_port) { /* --report-per-port: additive, the R exchange's names */
			err |= set_real(o, "bw_avg_p1", r->bw_avg_port[0]);
			err |= set_real(o, "msgRate_avg_p1", r->msg_rate_port[0]);
			err |= set_real(o, "bw_avg_p2", r->bw_avg_port[1]);
			err |= set_real(o, "msgRate_avg_p2", r->msg_rate_port[1]);
		}
	}
	return add_row(j, o, err);
}

int pt_json_add_lat(struct pt_json *j, const struct pt_lat_result *r)
{
	json_t *o;
	int err = 0;

	if (!j || !r || (j->mode != PT_REPORT_FULL &&
			 j->mode != PT_REPORT_LATENCY))
		return -EINVAL;
	o = row_head(r->size, &err);
	if (!o)
		return -ENOMEM;
	if (j->mode == PT_REPORT_LATENCY)
		return add_row(j, o, err | set_real(o, "avg_lat", r->t_avg));
	err |= set_int(o, "n_iterations", (long long)r->iters);
	err |= set_real(o, "t_min", r->t_min);
	err |= set_real(o, "t_max", r->t_max);
	err |= set_real(o, "t_typical", r->t_typical);
	err |= set_real(o, "t_avg", r->t_avg);
	err |= set_real(o, "t_stdev", r->t_stdev);
	err |= set_real(o, "percentile_99", r->p99);
	err |= set_real(o, "percentile_99.9", r->p99_9);
	err |= set_real(o, "percentile_50", r->p50);
	err |= set_real(o, "percentile_90", r->p90);
	err |= set_real(o, "percentile_99.99", r->p99_99);
	err |= set_real(o, "percentile_99.999", r->p99_999);
	err |= set_real(o, "max", r->max_all);
	if (r->has_cpu_util)
		err |= set_real(o, "CPU_util", r->cpu_util);
	return add_row(j, o, err);
}

int pt_json_add_lat_dur(struct pt_json *j, const struct pt_lat_dur_result *r)
{
	json_t *o;
	int err = 0;

	if (!j || !r || (j->mode != PT_REPORT_FULL &&
			 j->mode != PT_REPORT_LATENCY))
		return -EINVAL;
	o = row_head(r->size, &err);
	if (!o)
		return -ENOMEM;
	if (j->mode == PT_REPORT_LATENCY)
		return add_row(j, o, err | set_real(o, "t_avg", r->t_avg));
	err |= set_int(o, "n_iterations", (long long)r->iters);
	err |= set_real(o, "t_avg", r->t_avg);
	err |= set_real(o, "tps_average", r->tps);
	if (r->has_pct) {
		err |= set_int(o, "n_samples", (long long)r->samples);
		err |= set_real(o, "t_min", r->t_min);
		err |= set_real(o, "percentile_50", r->p50);
		err |= set_real(o, "percentile_90", r->p90);
		err |= set_real(o, "percentile_99", r->p99);
		err |= set_real(o, "percentile_99.9", r->p99_9);
		err |= set_real(o, "percentile_99.99", r->p99_99);
		err |= set_real(o, "percentile_99.999", r->p99_999);
		err |= set_real(o, "max", r->max);
	}
	return add_row(j, o, err);
}

/* The document is assembled on demand so the keys come out in the order
 * test_info, results, all_results. */
char *pt_json_dumps(const struct pt_json *j)
{
	json_t *doc;
	size_t n;
	char *text = NULL;

	if (!j)
		return NULL;
	doc = json_object();
	if (!doc)
		return NULL;
	n = json_array_size(j->rows);
	if (!json_object_set(doc, "test_info", j->info) &&
	    (n == 0 || !json_object_set(doc, "results",
					json_array_get(j->rows, n - 1))) &&
	    !json_object_set(doc, "all_results", j->rows) &&
	    (!j->limits || !json_object_set(doc, "limits", j->limits)))
		text = json_dumps(doc, PT_JSON_FLAGS);
	json_decref(doc);
	return text;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int pt_json_write(const struct pt_json *j, const char *path)
{
	char *text, *tmp = NULL;
	int fd, rc;

	if (!j || !path || !*path)
		return -EINVAL;
	text = pt_json_dumps(j);
	if (!text || asprintf(&tmp, "%s.%ld.tmp", path, (long)getpid()) < 0) {
		free(text);
		return -ENOMEM;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0 && errno == EEXIST) {
		/* Left by a crashed run that had our pid: the name is ours. */
		unlink(tmp);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	}
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	rc = write_all(fd, text, strlen(text));
	if (!rc)
		rc = write_all(fd, "\n", 1);
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
out:
	free(tmp);
	free(text);
	return rc;
}

void pt_json_free(struct pt_json *j)
{
	if (!j)
		return;
	json_decref(j->info);
	json_decref(j->rows);
	json_decref(j->limits);
	free(j);
}
