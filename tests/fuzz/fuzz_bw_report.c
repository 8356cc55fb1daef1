/* SPDX-License-Identifier: BSD-2-Clause */
/* The BW report R (docs/wire-protocol.md §8): five big-endian fields from the
 * peer, the check that refuses nonsense, then what -b does with accepted
 * figures: sum with ours, print, add to JSON.
 * fuzz-sources: perftest/wire/wire.c perftest/report/results.c perftest/report/sort_u64.c perftest/report/select_u64.c perftest/report/bw_peak.c perftest/report/bw_peak_general.c perftest/report/report.c perftest/report/json.c perftest/report/verdict.c
 * fuzz-libs: -ljansson -lm
 * fuzz-flags: -max_len=64
 *
 * Input: byte 0 = flags (iterations width 4/8, Gb/s, --output mode), then
 * the five fields as the peer sends them. */
#include <math.h>
#include "fuzz.h"
#include "perftest/report/json.h"
#include "perftest/report/report.h"
#include "perftest/report/results.h"
#include "perftest/wire/wire.h"

static void print_row(const struct pt_bw_result *r, enum pt_output_mode mode)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	FUZZ_ASSERT(f);
	if (mode == PT_REPORT_FULL)
		FUZZ_ASSERT(pt_report_bw_row(f, r) == 0);
	else
		FUZZ_ASSERT(pt_report_bw_number(f, mode, r) == 0);
	FUZZ_ASSERT(fclose(f) == 0);
	/* a row of numbers, never "nan" or "inf" */
	FUZZ_ASSERT(len > 0 && text[len - 1] == '\n');
	FUZZ_ASSERT(!strstr(text, "nan") && !strstr(text, "inf"));
	FUZZ_ASSERT(!strchr(text, '-'));
	free(text);
}

static void add_json(const struct pt_bw_result *r, enum pt_output_mode mode)
{
	const struct pt_test_info info = {
		.test_name = "Send BW Test", .device = "rxe0", .num_qps = 1,
		.transport = "IB", .connection = "RC", .pcie_relax = "OFF",
		.tx_depth = 128, .rx_depth = 512, .cq_mod = 100, .mtu = 1024,
		.link_type = "Ethernet", .gid_index = 1, .data_ex_method = "Ethernet",
		.tos = -1,
	};
	struct pt_json *j = pt_json_begin(&info, mode);
	char *doc;

	FUZZ_ASSERT(j);
	/* a row that cannot be written would vanish from the file silently */
	FUZZ_ASSERT(pt_json_add_bw(j, r) == 0);
	doc = pt_json_dumps(j);
	FUZZ_ASSERT(doc);
	free(doc);
	pt_json_free(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum pt_output_mode modes[] = {
		PT_REPORT_FULL, PT_REPORT_BANDWIDTH, PT_REPORT_MSG_RATE, PT_REPORT_FULL,
	};
	struct pt_bw_report theirs = { 0 };
	struct pt_bw_result local = { .size = 65536, .iters = 5000, .bw_peak = 11.5,
				      .bw_avg = 10.25, .msg_rate = 0.0195 };
	struct pt_bw_result remote, sum;
	size_t iters_size, off = 1;
	enum pt_output_mode mode;
	uint8_t again[8];
	char why[128];

	if (size < 1)
		return 0;
	iters_size = data[0] & 1 ? 4 : 8;
	local.gbits = !!(data[0] & 2);
	mode = modes[(data[0] >> 2) & 3];
	for (int f = 0; f < PT_BW_NFIELDS; f++) {
		size_t n = f == PT_BW_ITERS ? iters_size : 8;
		uint8_t in[8] = { 0 };

		if (off + n > size)
			return 0;
		memcpy(in, data + off, n);
		off += n;
		FUZZ_ASSERT(pt_bw_field_decode(&theirs, f, iters_size, in) == (int)n);
		FUZZ_ASSERT(pt_bw_field_encode(&theirs, f, iters_size, again) == (int)n);
		FUZZ_ASSERT(memcmp(in, again, n) == 0);
	}
	FUZZ_ASSERT(pt_bw_field_decode(&theirs, PT_BW_ITERS, 2, again) == -1);
	FUZZ_ASSERT(pt_bw_field_encode(&theirs, PT_BW_NFIELDS, 8, again) == -1);

	/* what oob.c refuses; and what send_bw.c does with the rest under -b */
	if (pt_bw_report_check(&theirs, why, sizeof(why))) {
		FUZZ_ASSERT(why[0] != '\0' && memchr(why, '\0', sizeof(why)));
		return 0;
	}
	remote = local;
	remote.bw_peak = theirs.bw_peak;
	remote.bw_avg = theirs.bw_avg;
	remote.msg_rate = theirs.msg_rate;
	FUZZ_ASSERT(pt_bw_sum(&local, &remote, &sum) == 0);
	print_row(&sum, mode);
	add_json(&sum, mode);
	return 0;
}
