/* SPDX-License-Identifier: BSD-2-Clause */
/* -O/--dualport over a fake two-port device (a struct pt_ctx filled by
 * hand, no verbs calls): the QP count doubles, the first half of the QPs
 * is on port 1 and the second on port 2 in INIT, in the address vector and
 * in the key message (each QP its own port's GID and LID); a one-port
 * device is refused before any QP exists. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "stderr_capture.h"
#include "options_harness.h"
#include "perftest/engine/engine.h"
#include "perftest/report/report.h"
#include "perftest/report/results.h"
#include "perftest/report/json.h"
#include "perftest/wire/wire.h"

/* A device with two active ports, distinct LIDs and GIDs, and QPs in a context. */
struct fake_dev {
	struct pt_ctx c;
	struct ibv_qp qp[8];
	struct pt_qp qps[8];
	struct ibv_mr mr;
};

static void fake_dev_init(struct fake_dev *f, const struct pt_params *p, int ports)
{
	memset(f, 0, sizeof(*f));
	f->c.p = p;
	f->c.dev.dev_attr.orig_attr.phys_port_cnt = (uint8_t)ports;
	snprintf(f->c.dev.devname, sizeof(f->c.dev.devname), "fake0");
	f->c.dev.port_attr.lid = 0x11;
	f->c.dev.gid_index = 3;
	memset(f->c.dev.gid.raw, 0xa1, 16);
	if (ports > 1) {
		f->c.dev.port2 = 2;
		f->c.dev.port2_attr.lid = 0x22;
		f->c.dev.gid_index2 = 5;
		memset(f->c.dev.gid2.raw, 0xb2, 16);
	}
	f->mr.rkey = 0x77;
	f->c.res.mr = &f->mr;
	f->c.res.num_qps = pt_qps_total(p);
	assert_true(f->c.res.num_qps <= 8);
	for (int i = 0; i < f->c.res.num_qps; i++) {
		f->qp[i].qp_num = 0x100u + (uint32_t)i;
		f->qps[i].qp = &f->qp[i];
	}
	f->c.res.qps = f->qps;
}

/* -O -q 2 on two ports: 4 QPs, ports 1,1,2,2 in INIT and in the AH, and
 * each QP's key message carries its own port's GID, GID index and LID. */
static void test_two_ports_half_and_half(void **state)
{
	static const int want_port[4] = { 1, 1, 2, 2 };
	struct run *r = ok(&pt_tool_write_bw, "host -O -q 2 -i 1");
	struct fake_dev *f = malloc(sizeof(*f));
	struct pt_key rem = { .lid = 0x33 };

	(void)state;
	assert_non_null(f);
	fake_dev_init(f, &r->p, 2);
	assert_int_equal(f->c.res.num_qps, 4);
	memset(rem.gid, 0xcc, 16);
	for (int i = 0; i < 4; i++) {
		struct ibv_qp_attr init;
		struct ibv_ah_attr ah;
		struct pt_key k;
		int mask = pt_qp_init_state(&f->c, i, &init);
		bool p2 = want_port[i] == 2;

		assert_true(mask & IBV_QP_PORT);
		assert_int_equal(init.port_num, want_port[i]);
		pt_ah_attr_fill(&f->c, i, &rem, &ah);
		assert_int_equal(ah.port_num, want_port[i]);
		assert_int_equal(ah.grh.sgid_index, p2 ? 5 : 3);
		assert_int_equal(ah.dlid, 0x33);
		assert_memory_equal(ah.grh.dgid.raw, rem.gid, 16);
		pt_key_fill(&f->c, i, &k);
		assert_int_equal(k.qpn, 0x100 + i);
		assert_int_equal(k.lid, p2 ? 0x22 : 0x11);
		assert_int_equal(k.gid_index, p2 ? 5 : 3);
		assert_memory_equal(k.gid, p2 ? f->c.dev.gid2.raw : f->c.dev.gid.raw, 16);
	}
	free(f);
}

/* Without -O nothing changes: -q 2 is 2 QPs, all on the -i port. */
static void test_one_port_path_unchanged(void **state)
{
	struct run *r = ok(&pt_tool_write_bw, "host -q 2 -i 2");
	struct fake_dev *f = malloc(sizeof(*f));
	struct pt_key rem = { .lid = 0x33 };

	(void)state;
	assert_non_null(f);
	fake_dev_init(f, &r->p, 2);
	assert_int_equal(f->c.res.num_qps, 2);
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_attr init;
		struct ibv_ah_attr ah;
		struct pt_key k;

		pt_qp_init_state(&f->c, i, &init);
		assert_int_equal(init.port_num, 2);
		pt_ah_attr_fill(&f->c, i, &rem, &ah);
		assert_int_equal(ah.port_num, 2);
		assert_int_equal(ah.grh.sgid_index, 3);
		pt_key_fill(&f->c, i, &k);
		assert_int_equal(k.lid, 0x11);
		assert_memory_equal(k.gid, f->c.dev.gid.raw, 16);
	}
	free(f);
}

/* pt_port_options_check with stderr captured; its return code. */
static int port_check(struct pt_ctx *c, char *err, size_t len)
{
	struct stderr_capture cap;
	int rc;

	stderr_capture_begin(&cap);
	rc = pt_port_options_check(c);
	stderr_capture_end(&cap, err, len);
	return rc;
}

/* -O on a one-port device: refused by the port check, which pt_dev_open
 * runs before any QP exists (no QP array yet), naming phys_port_cnt. */
static void test_one_port_device_refused(void **state)
{
	struct run *r = ok(&pt_tool_send_bw, "host -O");
	struct pt_ctx c;
	char err[512];

	(void)state;
	memset(&c, 0, sizeof(c));
	c.p = &r->p;
	c.dev.dev_attr.orig_attr.phys_port_cnt = 1;
	snprintf(c.dev.devname, sizeof(c.dev.devname), "rxe0");
	assert_int_equal(port_check(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--dualport needs a device with two ports: rxe0 has 1"
				 " (phys_port_cnt)"));
	assert_null(c.res.qps);
}

/* The session's header: -O -q 2 prints "Dual-port : ON" and 4 QPs (the
 * JSON's "Dual_port" comes from the same test info). */
static void test_header_line(void **state)
{
	struct run *r = ok(&pt_tool_write_bw, "host -O -q 2");
	struct fake_dev *f = malloc(sizeof(*f));
	struct ibv_device dev = { .transport_type = IBV_TRANSPORT_IB };
	struct ibv_context verbs = { .device = &dev };
	char out[8192];
	FILE *tmp = tmpfile();
	int saved = dup(1), rc;
	size_t n;

	(void)state;
	assert_non_null(f);
	assert_non_null(tmp);
	fake_dev_init(f, &r->p, 2);
	f->c.dev.verbs = &verbs;
	f->c.run.mtu = IBV_MTU_1024;
	fflush(stdout);
	assert_true(dup2(fileno(tmp), 1) >= 0);
	rc = pt_session_print_header(&f->c);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, sizeof(out) - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	assert_int_equal(rc, 0);
	assert_true(f->c.out.info.dual_port);
	assert_non_null(strstr(out, " Dual-port       : ON\t\tDevice         : fake0\n"));
	assert_non_null(strstr(out, " Number of qps   : 4\t\t"));
	free(f);
}

/* --report-per-port arithmetic: each port's BW and message rate are the
 * run's formulas over that port's messages (facts §5.7 iters_per_port),
 * in MiB/s and in Gb/s; the -b sum adds them port by port. */
static void test_per_port_arithmetic(void **state)
{
	struct pt_bw_input in = { .size = 4096, .iters = 4000, .msgs = 4000, .elapsed_ns = 2000000000ull,
				  .per_port = true, .msgs_port = { 3000, 1000 } };
	struct pt_bw_result r, sum;

	(void)state;
	assert_int_equal(pt_bw_compute(&in, &r), 0);
	assert_true(r.per_port);
	assert_float_equal(r.bw_avg_port[0], 4096.0 * 3000 / 2 / 1048576.0, 1e-9);
	assert_float_equal(r.bw_avg_port[1], 4096.0 * 1000 / 2 / 1048576.0, 1e-9);
	assert_float_equal(r.msg_rate_port[0], 3000 / 2 / 1e6, 1e-12);
	assert_float_equal(r.msg_rate_port[1], 1000 / 2 / 1e6, 1e-12);
	assert_float_equal(r.bw_avg_port[0] + r.bw_avg_port[1], r.bw_avg, 1e-9);
	assert_int_equal(pt_bw_sum(&r, &r, &sum), 0);
	assert_float_equal(sum.bw_avg_port[1], 2 * r.bw_avg_port[1], 1e-9);
	in.gbits = true;
	assert_int_equal(pt_bw_compute(&in, &r), 0);
	assert_float_equal(r.bw_avg_port[1], 4096.0 * 1000 / 2 / 125000000.0, 1e-12);
	in.per_port = false;   /* without the option nothing is filled */
	assert_int_equal(pt_bw_compute(&in, &r), 0);
	assert_false(r.per_port);
	assert_float_equal(r.bw_avg_port[0], 0, 0);
}

/* The report exchange's four per-port fields: each encodes to 8 bytes and
 * decodes into its own slot (port 1 and port 2 not swapped). */
static void test_per_port_wire_fields(void **state)
{
	struct pt_bw_report a = { .per_port = true, .bw_avg_port = { 11.5, 22.25 },
				  .msg_rate_port = { 0.125, 0.375 } }, b;
	const enum pt_bw_field f[4] = { PT_BW_AVG_P1, PT_BW_MSGRATE_P1, PT_BW_AVG_P2, PT_BW_MSGRATE_P2 };
	uint8_t buf[8];

	(void)state;
	memset(&b, 0, sizeof(b));
	for (int k = 0; k < 4; k++) {
		assert_int_equal(pt_bw_field_encode(&a, f[k], 8, buf), 8);
		assert_int_equal(pt_bw_field_decode(&b, f[k], 8, buf), 8);
	}
	assert_float_equal(b.bw_avg_port[0], 11.5, 0);
	assert_float_equal(b.bw_avg_port[1], 22.25, 0);
	assert_float_equal(b.msg_rate_port[0], 0.125, 0);
	assert_float_equal(b.msg_rate_port[1], 0.375, 0);
}

/* The per-port lines under the BW row, only with the option. */
static void test_per_port_lines(void **state)
{
	struct pt_bw_result r = { .size = 65536, .iters = 10, .bw_avg = 3, .msg_rate = 0.5,
				  .per_port = true, .bw_avg_port = { 1.25, 1.75 },
				  .msg_rate_port = { 0.2, 0.3 } };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	pt_report_bw_row(f, &r);
	r.per_port = false;
	pt_report_bw_row(f, &r);
	fclose(f);
	assert_non_null(strstr(buf, " Port 1: BW average[MiB/sec]  1.25   \t MsgRate[Mpps]  0.200000\n"));
	assert_non_null(strstr(buf, " Port 2: BW average[MiB/sec]  1.75   \t MsgRate[Mpps]  0.300000\n"));
	assert_null(strstr(strstr(buf, " Port 2") + 1, " Port 1"));
	free(buf);
}

/* JSON: "Dual_port": "ON" and the four per-port fields, only with the option. */
static void test_per_port_json(void **state)
{
	struct pt_test_info in = { .test_name = "RDMA_Write BW Test", .dual_port = true,
				   .device = "fake0", .num_qps = 4, .transport = "IB", .connection = "RC",
				   .pcie_relax = "ON", .tx_depth = 128, .rx_depth = -1, .cq_mod = 100,
				   .mtu = 1024, .link_type = "IB", .gid_index = -1,
				   .data_ex_method = "Ethernet", .tos = -1 };
	struct pt_bw_result r = { .size = 65536, .iters = 10, .bw_avg = 3, .msg_rate = 0.5,
				  .per_port = true, .bw_avg_port = { 1.25, 1.75 },
				  .msg_rate_port = { 0.2, 0.3 } };
	struct pt_json *j = pt_json_begin(&in, PT_REPORT_FULL);
	char *text;

	(void)state;
	assert_non_null(j);
	assert_int_equal(pt_json_add_bw(j, &r), 0);
	text = pt_json_dumps(j);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"Dual_port\": \"ON\""));
	assert_non_null(strstr(text, "\"bw_avg_p1\": 1.25"));
	assert_non_null(strstr(text, "\"msgRate_avg_p1\": 0.2"));
	assert_non_null(strstr(text, "\"bw_avg_p2\": 1.75"));
	assert_non_null(strstr(text, "\"msgRate_avg_p2\": 0.3"));
	free(text);
	pt_json_free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_ports_half_and_half),
		cmocka_unit_test(test_one_port_path_unchanged),
		cmocka_unit_test(test_one_port_device_refused),
		cmocka_unit_test(test_header_line),
		cmocka_unit_test(test_per_port_arithmetic),
		cmocka_unit_test(test_per_port_wire_fields),
		cmocka_unit_test(test_per_port_lines),
		cmocka_unit_test(test_per_port_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
