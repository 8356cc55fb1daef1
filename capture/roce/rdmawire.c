/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmawire: the RoCE v2 packets of a pcap file per QP, joined with a
 * --trace file of the same run (rdmawire.1). */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "roce_plot.h"
#include "roce_report.h"

static const char usage[] =
	"usage: rdmawire FILE.pcap [--trace TRACE [--local ADDR] [--psn QPN=PSN]...] [--json] [--all]\n"
	"                [--plot OUT.png]\n"
	"  FILE.pcap      a capture with the RoCE v2 frames (tcpdump -i eth0 -w FILE udp port 4791)\n"
	"  --trace TRACE  our tools' --trace file (CSV or JSON Lines) of the same run: join each WR\n"
	"                 with its packets\n"
	"  --psn QPN=PSN  the starting PSN of local QP QPN (the tools' \"local address\" line);\n"
	"                 default: the first PSN of its requests in the capture\n"
	"  --local ADDR   the IP address of the host that ran the traced tool (needed when both\n"
	"                 ends' QPs have the same QPN, as often in the lab)\n"
	"  --json         JSON instead of text (every flow, NAK and WR)\n"
	"  --all          text: every WR, not only the notable ones\n"
	"  --plot OUT.png the wire per QP over time, WRs as spans (gnuplot)\n";

static int parse_hint(const char *s, struct roce_psn_hint *h)
{
	char *end;
	unsigned long q, p;

	q = strtoul(s, &end, 0);
	if (end == s || *end != '=' || q > 0xffffff)
		return -1;
	s = end + 1;
	p = strtoul(s, &end, 0);
	if (end == s || *end || p > 0xffffff)
		return -1;
	h->qpn = (uint32_t)q;
	h->psn = (uint32_t)p;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "trace", required_argument, NULL, 't' }, { "json", no_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'p' }, { "psn", required_argument, NULL, 's' },
		{ "all", no_argument, NULL, 'a' }, { "help", no_argument, NULL, 'h' },
		{ "local", required_argument, NULL, 'l' }, { 0 },
	};
	struct roce_psn_hint hints[64];
	struct roce_report_opts ro = { 0 };
	struct roce_join_opts jo = { .hints = hints };
	const char *trace = NULL, *png = NULL;
	struct wrt_trace t = { 0 };
	struct roce_join j = { 0 };
	struct roce_capture c;
	size_t nhints = 0;
	bool json = false;
	char err[600];
	int o, rc = 0;

	while ((o = getopt_long(argc, argv, "t:jp:s:ahl:", opts, NULL)) != -1) {
		switch (o) {
		case 'l':
			if (inet_pton(AF_INET, optarg, jo.local) == 1) {
				jo.local_version = 4;
			} else if (inet_pton(AF_INET6, optarg, jo.local) == 1) {
				jo.local_version = 6;
			} else {
				fprintf(stderr, "rdmawire: --local '%s': want an IPv4 or IPv6 address\n", optarg);
				return 2;
			}
			jo.has_local = true;
			break;
		case 't': trace = optarg; break;
		case 'j': json = true; break;
		case 'p': png = optarg; break;
		case 'a': ro.all_wrs = true; break;
		case 's':
			if (nhints == sizeof(hints) / sizeof(hints[0]) || parse_hint(optarg, &hints[nhints])) {
				fprintf(stderr, "rdmawire: --psn '%s': want QPN=PSN, each 0..0xffffff (at most 64)\n", optarg);
				return 2;
			}
			nhints++;
			break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "rdmawire: %s\n%s", optind < argc ? "one capture file only" : "no capture file",
			usage);
		return 2;
	}
	if (roce_capture_read(argv[optind], &c, err, sizeof(err))) {
		fprintf(stderr, "rdmawire: %s\n", err);
		return 1;
	}
	if (!c.roce)
		fprintf(stderr, "rdmawire: %s: no RoCE v2 packet among its %llu frames\n", argv[optind],
			(unsigned long long)c.frames);
	if (trace) {
		if (wrt_read(trace, &t, err, sizeof(err))) {
			fprintf(stderr, "rdmawire: %s\n", err);
			roce_capture_free(&c);
			return 1;
		}
		jo.nhints = nhints;
		if (roce_join(&c, &t, &jo, &j, err, sizeof(err))) {
			fprintf(stderr, "rdmawire: %s\n", err);
			rc = 1;
			goto out;
		}
		ro.trace = &t;
		ro.trace_path = trace;
	}
	if (json) {
		if (roce_report_json(stdout, &c, trace ? &j : NULL, &ro)) {
			fprintf(stderr, "rdmawire: writing the JSON failed\n");
			rc = 1;
		}
	} else {
		roce_report_text(stdout, &c, trace ? &j : NULL, &ro);
	}
	if (fflush(stdout)) {
		fprintf(stderr, "rdmawire: writing the report failed\n");
		rc = 1;
	}
	if (png && roce_plot(&c, trace ? &j : NULL, trace ? &t : NULL, png))
		rc = 1;
out:
	roce_join_free(&j);
	wrt_trace_free(&t);
	roce_capture_free(&c);
	return rc;
}
