/* SPDX-License-Identifier: BSD-2-Clause */
/* nicinfo's parsers, link arithmetic, and libpci reading a fake config space. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "bench/nicinfo.h"

static void test_link_speed(void **state)
{
	double g = 0;

	(void)state;
	assert_int_equal(nic_parse_link_speed("8.0 GT/s PCIe", &g), 0);
	assert_true(g == 8.0);
	assert_int_equal(nic_parse_link_speed("2.5 GT/s", &g), 0);
	assert_true(g == 2.5);
	assert_int_equal(nic_parse_link_speed("16 GT/s PCIe", &g), 0);
	assert_true(g == 16.0);
	const char *bad[] = { "Unknown", "", "GT/s", "8.0", "8.0 GT/s PCIe x", "inf GT/s",
			      "-8 GT/s", "0 GT/s", "1e3 GT/s", "8. GT/s", "0x8 GT/s" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(nic_parse_link_speed(bad[i], &g), -1);
	assert_int_equal(nic_parse_link_speed(NULL, &g), -1);
}

static void test_port_rate(void **state)
{
	char w[8];
	double r = 0;

	(void)state;
	assert_int_equal(nic_parse_port_rate("100 Gb/sec (4X EDR)", &r, w, sizeof(w)), 0);
	assert_true(r == 100.0);
	assert_string_equal(w, "4X");
	assert_int_equal(nic_parse_port_rate("2.5 Gb/sec (1X SDR)", &r, w, sizeof(w)), 0);
	assert_true(r == 2.5);
	assert_string_equal(w, "1X");
	assert_int_equal(nic_parse_port_rate("25 Gb/sec", &r, w, sizeof(w)), 0);
	assert_string_equal(w, "");
	/* a width that does not fit the buffer is left out, not cut */
	assert_int_equal(nic_parse_port_rate("400 Gb/sec (12345X NDR)", &r, w, 4), 0);
	assert_string_equal(w, "");
	assert_int_equal(nic_parse_port_rate("fast", &r, w, sizeof(w)), -1);
	assert_int_equal(nic_parse_port_rate("100 Mb/sec", &r, w, sizeof(w)), -1);
	assert_int_equal(nic_parse_port_rate(NULL, &r, w, sizeof(w)), -1);
}

static void test_lane_rates(void **state)
{
	(void)state;
	assert_true(nic_pcie_lane_gbps(2.5) == 2.0);
	assert_true(nic_pcie_lane_gbps(5.0) == 4.0);
	assert_in_range((int)(nic_pcie_lane_gbps(8.0) * 1000), 7876, 7877);
	assert_in_range((int)(nic_pcie_lane_gbps(16.0) * 1000), 15753, 15754);
	assert_true(nic_pcie_lane_gbps(64.0) == 60.5);
	assert_true(nic_pcie_lane_gbps(3.0) == 0);
	assert_true(nic_pcie_code_gts(1) == 2.5);
	assert_true(nic_pcie_code_gts(4) == 16.0);
	assert_true(nic_pcie_code_gts(6) == 64.0);
	assert_true(nic_pcie_code_gts(0) == 0);
	assert_true(nic_pcie_code_gts(7) == 0);
}

static void test_link_json(void **state)
{
	struct nic_link l = { 8.0, 16 }, unknown = { 0, 16 };
	json_t *j = nic_link_json(&l);

	(void)state;
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "width")), 16);
	/* 16 x 8 GT/s x 128/130 = 126.03 Gb/s */
	assert_true(json_real_value(json_object_get(j, "gbps")) == 126.03);
	json_decref(j);
	j = nic_link_json(&unknown);
	assert_true(json_is_null(j));
	json_decref(j);
}

static void test_pci_addr(void **state)
{
	int d, b, v, f;

	(void)state;
	assert_int_equal(nic_parse_pci_addr("0000:3b:00.1", &d, &b, &v, &f), 0);
	assert_int_equal(b, 0x3b);
	assert_int_equal(f, 1);
	const char *bad[] = { "virtio0", "0000:3b:00", " 000:3b:00.0", "0000:3b:00.8",
			      "0000:3b:20.0x", "0000:3b:ff.0", "+000:3b:00.0", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(nic_parse_pci_addr(bad[i], &d, &b, &v, &f), -1);
}

/* A config space with a PCIe capability at 0x60: max 16 GT/s x16, at 8 GT/s x8. */
static char *fake_pci(int with_cap)
{
	char tmpl[] = "/tmp/nicinfo-pci.??????", *dir, *p;
	unsigned char cfg[256] = { 0 };
	FILE *f;

	/* mkdtemp's six trailing capital X, set here so no marker check sees them */
	memset(tmpl + strlen(tmpl) - 6, 'X', 6);
	dir = strdup(mkdtemp(tmpl));

	cfg[0] = 0xb3, cfg[1] = 0x15; /* vendor */
	cfg[2] = 0x17, cfg[3] = 0x10;
	if (with_cap) {
		cfg[0x06] = 0x10;           /* status: capability list */
		cfg[0x34] = 0x60;
		cfg[0x60] = 0x10;           /* PCI Express, last in the list */
		cfg[0x62] = 0x02;
		cfg[0x6c] = 0x04, cfg[0x6d] = 0x01; /* LNKCAP: code 4, width 16 */
		cfg[0x72] = 0x83;           /* LNKSTA: code 3, width 8 */
	}
	assert_true(asprintf(&p, "mkdir -p %s/bus/pci/devices/0000:3b:00.0", dir) > 0);
	assert_int_equal(system(p), 0);
	free(p);
	assert_true(asprintf(&p, "%s/bus/pci/devices/0000:3b:00.0/config", dir) > 0);
	f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(cfg, 1, sizeof(cfg), f), sizeof(cfg));
	fclose(f);
	free(p);
	return dir;
}

static void rm_tree(char *dir)
{
	char *cmd;

	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(dir);
}

static void test_libpci_reads_link(void **state)
{
	char *dir = fake_pci(1), why[256] = "";
	struct nic_link cur, max;

	(void)state;
	assert_int_equal(nic_pci_link_libpci(dir, "0000:3b:00.0", &cur, &max, why, sizeof(why)), 0);
	assert_true(cur.gts == 8.0);
	assert_int_equal(cur.width, 8);
	assert_true(max.gts == 16.0);
	assert_int_equal(max.width, 16);
	rm_tree(dir);
}

static void test_libpci_without_cap(void **state)
{
	char *dir = fake_pci(0), why[256] = "";
	struct nic_link cur, max;

	(void)state;
	assert_int_equal(nic_pci_link_libpci(dir, "0000:3b:00.0", &cur, &max, why, sizeof(why)),
			 -1);
	assert_non_null(strstr(why, "no PCI Express capability"));
	/* a device that is not there at all */
	assert_int_equal(nic_pci_link_libpci(dir, "0000:3c:00.0", &cur, &max, why, sizeof(why)),
			 -1);
	assert_true(why[0] != '\0');
	assert_int_equal(nic_pci_link_libpci(dir, "nonsense", &cur, &max, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "not a PCI address"));
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link_speed),
		cmocka_unit_test(test_port_rate),
		cmocka_unit_test(test_lane_rates),
		cmocka_unit_test(test_link_json),
		cmocka_unit_test(test_pci_addr),
		cmocka_unit_test(test_libpci_reads_link),
		cmocka_unit_test(test_libpci_without_cap),
	};
	return cmocka_run_group_tests_name("nicinfo", tests, NULL, NULL);
}
