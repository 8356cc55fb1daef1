/* SPDX-License-Identifier: BSD-2-Clause */
/* nicinfo [--sysfs-root DIR] [DEVICE...]: JSON about RDMA devices and their host. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nicinfo.h"

static const char usage[] =
	"Usage: nicinfo [--sysfs-root DIR] [DEVICE...]\n"
	"Prints JSON: {\"host\": {...}, \"devices\": [...]} for the named RDMA devices,\n"
	"or for every device under DIR/class/infiniband (DIR defaults to /sys).\n";

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = "/sys";
	char *real_root = NULL;
	json_t *names, *devs, *doc, *n;
	char why[512];
	size_t i;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'r' && *optarg) {
			root = optarg;
		} else {
			fputs(usage, c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	/* Absolute and free of symlinks, like the device paths found below it. */
	real_root = realpath(root, NULL);
	if (real_root)
		root = real_root;
	devs = json_array();
	if (optind < argc) {
		names = json_array();
		for (int a = optind; a < argc; a++)
			json_array_append_new(names, json_string(argv[a]));
	} else if (!(names = nic_device_names(root))) {
		/* No devices is an answer, not an error: still describe the host. */
		fprintf(stderr, "nicinfo: no RDMA devices (%s/class/infiniband: %m)\n", root);
		names = json_array();
	}
	json_array_foreach(names, i, n) {
		json_t *d = nic_device_json(root, json_string_value(n), why, sizeof(why));

		if (!d) {
			fprintf(stderr, "nicinfo: %s\n", why);
			rc = 1;
			continue;
		}
		json_array_append_new(devs, d);
	}
	doc = json_pack("{s:o, s:o}", "host", nic_host_json(root), "devices", devs);
	if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) ||
	    puts("") == EOF) {
		fprintf(stderr, "nicinfo: cannot write the JSON\n");
		rc = 1;
	}
	json_decref(doc);
	json_decref(names);
	free(real_root);
	return rc;
}
