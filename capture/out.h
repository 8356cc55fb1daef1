/* SPDX-License-Identifier: BSD-2-Clause */
/* One output file, written in whole records: a record is appended to a
 * bounded buffer, the buffer goes to the file at record boundaries, and a
 * write that fails (disk full) is cut back to the last whole record, so the
 * file stays readable (tshark, tcpdump -r) whatever stopped the capture. */
#ifndef CAP_OUT_H
#define CAP_OUT_H
#include <pcap/pcap.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct cap_out {
	int fd;
	char *buf;
	size_t used, cap, thresh;
	off_t committed;        /* bytes on disk, all whole records */
	FILE *cookie;           /* pcap: libpcap writes into buf through it */
	pcap_t *dead;
	pcap_dumper_t *dumper;
	uint64_t records;
	uint64_t stalls;        /* writes slower than CAP_STALL_NS */
	char path[512];
};

#define CAP_STALL_NS 50000000ull  /* 50 ms: a write the receive path would feel */

/* Open path (truncated); pcap when linktype >= 0 (nanosecond file, libpcap's
 * header written), else a plain byte file. max_record bounds one record.
 * 0 or -1 with errno. */
int cap_out_open(struct cap_out *o, const char *path, int linktype, unsigned snaplen,
		 size_t max_record);

/* Append one pcap record (ts in ns since the epoch) / one byte record. */
void cap_out_pcap(struct cap_out *o, uint64_t ts_ns, const uint8_t *frame, size_t caplen,
		  size_t wirelen);
void cap_out_bytes(struct cap_out *o, const void *data, size_t len);

/* After a record: write the buffer out when it passed its threshold (or
 * always with force). 0, or -1 with errno and the file cut back to its last
 * whole record. */
int cap_out_commit(struct cap_out *o, int force);

/* Flush (force) and close; 0 or -1 with errno. Safe on a closed out. */
int cap_out_close(struct cap_out *o);

#endif
