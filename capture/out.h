/* SPDX-License-Identifier: BSD-2-Clause */
/* One output file, written in whole records: a record is appended to a
 * bounded buffer, the buffer goes to the file at record boundaries, and a
 * write that fails (disk full) is cut back to the last whole record, so the
 * file stays readable (tshark, tcpdump -r) whatever stopped the capture.
 *
 * Where the file system takes O_DIRECT, the buffer goes to the disk without
 * the page cache: a buffered write costs the recorder its copy into the page
 * cache and the file system's per-page work, most of its CPU per packet at a
 * high rate (rdmacap(8), FILES AND LIMITS). Direct writes are whole aligned
 * blocks; the bytes past the last block stay in the buffer, and the tail
 * goes out buffered when the file is closed. */
#ifndef CAP_OUT_H
#define CAP_OUT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CAP_OUT_ALIGN 4096u      /* direct writes: buffer, size and offset */

struct cap_out {
	int fd;                 /* buffered: the header, the tail, the cut-back */
	int dfd;                /* the same file with O_DIRECT, or -1 */
	char *buf;              /* CAP_OUT_ALIGN-aligned */
	size_t used, cap, thresh;
	off_t base;             /* direct: the file offset of buf[0] */
	off_t committed;        /* bytes on disk up to the last whole record */
	uint32_t *ends;         /* direct: record ends in buf, ascending */
	size_t nends, max_ends;
	uint64_t records;
	int direct_io;          /* 1: opened with O_DIRECT, never refused (kept after close) */
	uint64_t stalls;        /* writes slower than CAP_STALL_NS */
	char path[512];
};

#define CAP_STALL_NS 50000000ull  /* 50 ms: a write the receive path would feel */

/* Open path (truncated); pcap when linktype >= 0 (nanosecond file, libpcap's
 * header written), else a plain byte file. max_record bounds one record.
 * direct: try O_DIRECT (regular files whose file system takes it).
 * 0 or -1 with errno. */
int cap_out_open(struct cap_out *o, const char *path, int linktype, unsigned snaplen,
		 size_t max_record, int direct);

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

/* 1 while the file is written with O_DIRECT. */
static inline int cap_out_direct(const struct cap_out *o)
{
	return o->dfd >= 0;
}

#endif
