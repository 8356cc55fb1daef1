/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "out.h"

static ssize_t cookie_write(void *c, const char *data, size_t len)
{
	struct cap_out *o = c;

	/* cap_out_open sized buf for the threshold plus one record, and every
	 * record is followed by cap_out_commit: this cannot overflow */
	if (o->used + len > o->cap) {
		errno = ENOBUFS;
		return -1;
	}
	memcpy(o->buf + o->used, data, len);
	o->used += len;
	return (ssize_t)len;
}

static int cookie_close(void *c)
{
	(void)c;
	return 0;
}

int cap_out_open(struct cap_out *o, const char *path, int linktype, unsigned snaplen,
		 size_t max_record)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	snprintf(o->path, sizeof(o->path), "%s", path);
	o->thresh = 64 * 1024;
	o->cap = o->thresh + max_record + 64;
	o->buf = malloc(o->cap);
	if (!o->buf)
		return -1;
	o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->fd < 0)
		goto fail;
	if (linktype < 0)
		return 0;
	cookie_io_functions_t io = { .write = cookie_write, .close = cookie_close };

	o->cookie = fopencookie(o, "w", io);
	if (!o->cookie)
		goto fail;
	setvbuf(o->cookie, NULL, _IONBF, 0);
	o->dead = pcap_open_dead_with_tstamp_precision(linktype, (int)snaplen, PCAP_TSTAMP_PRECISION_NANO);
	if (!o->dead)
		goto fail;
	o->dumper = pcap_dump_fopen(o->dead, o->cookie);
	if (!o->dumper)
		goto fail;
	/* the pcap header goes out at once: a full disk shows here, not later */
	if (cap_out_commit(o, 1)) {
		int e = errno;

		cap_out_close(o);
		errno = e;
		return -1;
	}
	return 0;
fail: {
	int e = errno ? errno : ENOMEM;

	if (o->dead)
		pcap_close(o->dead);
	if (o->cookie && !o->dumper)
		fclose(o->cookie);
	if (o->fd >= 0)
		close(o->fd);
	free(o->buf);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	errno = e;
	return -1;
}
}

void cap_out_pcap(struct cap_out *o, uint64_t ts_ns, const uint8_t *frame, size_t caplen,
		  size_t wirelen)
{
	struct pcap_pkthdr h = {
		.caplen = (bpf_u_int32)caplen, .len = (bpf_u_int32)wirelen,
		/* a nanosecond pcap_t takes nanoseconds in tv_usec */
		.ts = { .tv_sec = (time_t)(ts_ns / 1000000000ull), .tv_usec = (suseconds_t)(ts_ns % 1000000000ull) },
	};

	pcap_dump((u_char *)o->dumper, &h, frame);
	o->records++;
}

void cap_out_bytes(struct cap_out *o, const void *data, size_t len)
{
	if (o->used + len <= o->cap) {
		memcpy(o->buf + o->used, data, len);
		o->used += len;
	}
	o->records++;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int cap_out_commit(struct cap_out *o, int force)
{
	size_t done = 0;
	uint64_t t0;

	if (o->fd < 0 || !o->used || (!force && o->used < o->thresh))
		return 0;
	t0 = now_ns();
	while (done < o->used) {
		ssize_t n = write(o->fd, o->buf + done, o->used - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : ENOSPC;

			/* a part of this buffer may be on disk: cut it off */
			if (ftruncate(o->fd, o->committed) == 0)
				lseek(o->fd, o->committed, SEEK_SET);
			o->used = 0;
			errno = e;
			return -1;
		}
		done += (size_t)n;
	}
	if (now_ns() - t0 > CAP_STALL_NS)
		o->stalls++;
	o->committed += (off_t)o->used;
	o->used = 0;
	return 0;
}

int cap_out_close(struct cap_out *o)
{
	int rc = 0, e = 0;

	if (!o->buf)
		return 0;
	if (cap_out_commit(o, 1)) {
		rc = -1;
		e = errno;
	}
	if (o->dumper)
		pcap_dump_close(o->dumper);  /* fcloses the cookie stream */
	if (o->dead)
		pcap_close(o->dead);
	if (o->fd >= 0 && close(o->fd) && !rc) {
		rc = -1;
		e = errno;
	}
	free(o->buf);
	o->buf = NULL;
	o->fd = -1;
	o->dumper = NULL;
	o->dead = NULL;
	o->cookie = NULL;
	errno = e;
	return rc;
}
