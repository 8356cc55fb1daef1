/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace as a perftest plugin: argument parsing and the ops table, shared
 * by --trace (built in) and libwrtrace.so (wrtrace_entry.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "wrtrace.h"

static int fail(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_count(const char *what, const char *s, uint64_t lo, uint64_t hi, uint64_t *v,
		       char *err, size_t err_len)
{
	char *end;

	errno = 0;
	*v = (s[0] >= '0' && s[0] <= '9') ? strtoull(s, &end, 10) : 0;
	if (s[0] < '0' || s[0] > '9' || errno || *end || *v < lo || *v > hi)
		return fail(err, err_len, "%s '%s': want an integer %llu..%llu", what, s,
			    (unsigned long long)lo, (unsigned long long)hi);
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int wrt_config_parse(const char *args, struct wrt_config *cfg, char *err, size_t err_len)
{
	/* records hold 72 bytes: 2^32 of them is already 288 GiB */
	const uint64_t max_cap = UINT32_MAX;
	const char *env = getenv(WRT_MAX_ENV), *p;
	size_t len;

	memset(cfg, 0, sizeof(*cfg));
	cfg->max_records = WRT_DEFAULT_MAX;
	cfg->fifo_min = 64;
	if (env && *env && parse_count(WRT_MAX_ENV, env, 0, max_cap, &cfg->max_records, err, err_len))
		return -1;
	p = strchr(args, ':');
	len = p ? (size_t)(p - args) : strlen(args);
	if (len == 0)
		return fail(err, err_len, "no output file (want FILE.csv or FILE.jsonl, then :max=N)");
	if (len >= sizeof(cfg->path))
		return fail(err, err_len, "output path longer than %zu bytes", sizeof(cfg->path) - 1);
	memcpy(cfg->path, args, len);
	cfg->jsonl = ends_with(cfg->path, ".jsonl");
	while (p) {
		const char *opt = p + 1, *next = strchr(opt, ':');
		size_t olen = next ? (size_t)(next - opt) : strlen(opt);
		char buf[64];
		uint64_t v;

		if (olen >= sizeof(buf))
			return fail(err, err_len, "option '%.*s...' too long", 20, opt);
		memcpy(buf, opt, olen);
		buf[olen] = '\0';
		if (!strncmp(buf, "max=", 4)) {
			if (parse_count("max", buf + 4, 0, max_cap, &v, err, err_len))
				return -1;
			cfg->max_records = v;
		} else if (!strncmp(buf, "fifo=", 5)) {
			if (parse_count("fifo", buf + 5, 1, 1u << 24, &v, err, err_len))
				return -1;
			cfg->fifo_min = (uint32_t)v;
		} else if (!strcmp(buf, "quiet")) {
			cfg->quiet = true;
		} else if (!strcmp(buf, "nodefer")) {
			cfg->nodefer = true;
		} else {
			return fail(err, err_len, "unknown option '%s' (known: max=N, fifo=N, nodefer, quiet)",
				    buf);
		}
		p = next;
	}
	return 0;
}

static int plug_init(const char *args, void **state, char *err, size_t err_len)
{
	struct wrt_config cfg;
	FILE *f;

	if (wrt_config_parse(args, &cfg, err, err_len))
		return -1;
	/* fail now rather than after a long run */
	f = fopen(cfg.path, "a");
	if (!f)
		return fail(err, err_len, "cannot write %s: %s", cfg.path, strerror(errno));
	fclose(f);
	*state = wrt_new(&cfg);
	if (!*state)
		return fail(err, err_len, "out of memory");
	return 0;
}

static int plug_run_start(void *s, const struct pt_plugin_run_info *info, char *err, size_t err_len)
{
	return wrt_run_start(s, info, err, err_len);
}

static void plug_post(void *s, const struct pt_plugin_post *ev)
{
	wrt_post(s, ev);
}

static void plug_post_one(void *s, uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t_ns)
{
	wrt_post_one(s, qp, seq, wr_id, t_ns);
}

static void plug_bind_post_slots(void *s, struct pt_plugin_post_slots *slots, uint32_t n)
{
	wrt_bind_post_slots(s, slots, n);
}

static void plug_bind_pair_slots(void *s, struct pt_plugin_pair_slots *slots, uint32_t n)
{
	wrt_bind_pair_slots(s, slots, n);
}

static void plug_completion(void *s, const struct pt_plugin_completion *ev)
{
	wrt_complete(s, ev);
}

static void plug_clock_fit(void *s, const struct pt_plugin_clock_fit *fit)
{
	wrt_clock_fit(s, fit);
}

static int plug_run_end(void *s, const struct pt_plugin_run_end *end, char *err, size_t err_len)
{
	return wrt_run_end(s, end, err, err_len);
}

static void plug_fini(void *s)
{
	wrt_free(s);
}

static const struct pt_plugin_ops wrt_ops = {
	.abi_version = PT_PLUGIN_ABI_VERSION,
	.struct_size = sizeof(struct pt_plugin_ops),
	.name = "wrtrace",
	.init = plug_init,
	.run_start = plug_run_start,
	.post = plug_post,
	.completion = plug_completion,
	.clock_fit = plug_clock_fit,
	.run_end = plug_run_end,
	.fini = plug_fini,
	.post_one = plug_post_one,
	.bind_post_slots = plug_bind_post_slots,
	.bind_pair_slots = plug_bind_pair_slots,
};

const struct pt_plugin_ops *wrt_plugin_get_ops(void)
{
	return &wrt_ops;
}
