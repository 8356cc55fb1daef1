/* SPDX-License-Identifier: BSD-2-Clause */
/* Example perftest plugin: counts what the hooks report, one line per run.
 *   cc -shared -fPIC -I DIR_OF_perftest_plugin.h -o count_plugin.so count_plugin.c
 *   ib_send_bw --plugin=./count_plugin.so[:OUTFILE] ...   (default: stdout) */
#include <stdio.h>
#include <stdlib.h>
#include <perftest_plugin.h>

struct counts { FILE *out; unsigned long long posts, wrs, bytes, last_seq, cqes, recvs, hw, wr_id; };

static int init(const char *args, void **state, char *err, size_t len)
{
	struct counts *c = calloc(1, sizeof(*c));
	if (!c || !(c->out = *args ? fopen(args, "w") : stdout))
		return snprintf(err, len, "cannot open '%s' for writing", args), free(c), -1;
	return *state = c, 0;
}
static int run_start(void *s, const struct pt_plugin_run_info *in, char *err, size_t len)
{
	struct counts *c = s;
	*c = (struct counts){ .out = c->out };
	fprintf(c->out, "start run=%u tool=%s device=%s qps=%u qpn0=0x%x size=%llu iters=%llu\n",
		in->run, in->tool, in->device, in->num_qps, in->num_qps ? in->qp_nums[0] : 0,
		(unsigned long long)in->msg_size, (unsigned long long)in->iterations);
	return (void)err, (void)len, 0;
}
static void post(void *s, const struct pt_plugin_post *ev)
{
	struct counts *c = s;
	c->posts++, c->wrs += ev->count, c->bytes += (unsigned long long)ev->count * ev->bytes;
	c->last_seq = ev->first_seq + ev->count - 1;
}
static void completion(void *s, const struct pt_plugin_completion *ev)
{
	struct counts *c = s;
	c->cqes++, c->wr_id = ev->wr_id, c->recvs += !!(ev->flags & PT_PLUGIN_COMP_RECV), c->hw += !!(ev->flags & PT_PLUGIN_COMP_HW_TS);
}
static int run_end(void *s, const struct pt_plugin_run_end *e, char *err, size_t len)
{
	struct counts *c = s;
	fprintf(c->out, "end run=%u posts=%llu wrs=%llu bytes=%llu last_seq=%llu cqes=%llu recvs=%llu hw=%llu last_wr_id=0x%llx\n",
		e->run, c->posts, c->wrs, c->bytes, c->last_seq, c->cqes, c->recvs, c->hw, c->wr_id);
	return fflush(c->out) ? snprintf(err, len, "cannot write the counts"), -1 : 0;
}
static void fini(void *s) { struct counts *c = s; if (c->out != stdout) fclose(c->out); free(c); }

static const struct pt_plugin_ops ops = { .abi_version = PT_PLUGIN_ABI_VERSION, .struct_size = sizeof(ops), .name = "count",
	.init = init, .run_start = run_start, .post = post, .completion = completion, .run_end = run_end, .fini = fini };
const struct pt_plugin_ops *perftest_plugin_ops(void) { return &ops; }
