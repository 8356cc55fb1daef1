/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "out.h"

#define THRESH_BUFFERED (64u * 1024)
#define THRESH_DIRECT (256u * 1024)   /* fewer, larger synchronous writes */
/* Record ends kept per buffer: one per 64 bytes. Smaller records may fill
 * the list; a failed write then cuts back to the last end kept, a few whole
 * records earlier, never into one. */
#define END_EVERY 64u

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* libpcap writes the file header through a stdio stream: this one appends
 * it to the buffer. Records are written by cap_out_pcap itself (a stream
 * per record cost more than the record's copy). */
static ssize_t cookie_write(void *c, const char *data, size_t len)
{
	struct cap_out *o = c;

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

static int pcap_header(struct cap_out *o, int linktype, unsigned snaplen)
{
	cookie_io_functions_t io = { .write = cookie_write, .close = cookie_close };
	FILE *f = fopencookie(o, "w", io);
	pcap_t *dead;
	pcap_dumper_t *d;

	if (!f)
		return -1;
	setvbuf(f, NULL, _IONBF, 0);
	dead = pcap_open_dead_with_tstamp_precision(linktype, (int)snaplen, PCAP_TSTAMP_PRECISION_NANO);
	if (!dead) {
		fclose(f);
		errno = ENOMEM;
		return -1;
	}
	d = pcap_dump_fopen(dead, f);
	if (!d) {
		fclose(f);
		pcap_close(dead);
		errno = ENOMEM;
		return -1;
	}
	pcap_dump_close(d);  /* fcloses the stream: the header is in buf */
	pcap_close(dead);
	return o->used ? 0 : (errno = EIO, -1);
}

static void note_end(struct cap_out *o)
{
	if (o->nends < o->max_ends && (!o->nends || o->ends[o->nends - 1] != o->used))
		o->ends[o->nends++] = (uint32_t)o->used;
}

/* The first n bytes of buf are on disk: the last whole record among them
 * (the greatest record end <= n) moves the file's commit point. None may
 * end there: buf[0] itself can be inside a record that began before it. */
static void on_disk(struct cap_out *o, size_t n)
{
	size_t lo = 0, hi = o->nends;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (o->ends[mid] <= n)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && o->base + (off_t)o->ends[lo - 1] > o->committed)
		o->committed = o->base + (off_t)o->ends[lo - 1];
}

/* The file has its last whole record at o->committed: cut it there. */
static int cut_back(struct cap_out *o, int e)
{
	if (ftruncate(o->fd, o->committed) == 0)
		lseek(o->fd, o->committed, SEEK_SET);
	o->used = 0;
	o->nends = 0;
	errno = e;
	return -1;
}

/* len bytes of buf to fd at off (pwrite) or at its offset (off < 0);
 * returns the bytes written, and sets *err when fewer. */
static size_t put(int fd, const char *buf, size_t len, off_t off, int *err)
{
	size_t done = 0;

	*err = 0;
	while (done < len) {
		ssize_t n = off < 0 ? write(fd, buf + done, len - done)
				    : pwrite(fd, buf + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*err = n < 0 ? errno : ENOSPC;
			break;
		}
		done += (size_t)n;
	}
	return done;
}

/* Direct: the whole blocks of buf; what follows the last one moves to the
 * front. A file system that refuses (EINVAL) makes the file buffered. */
static int put_direct(struct cap_out *o)
{
	size_t a = o->used & ~(size_t)(CAP_OUT_ALIGN - 1), done, keep;
	int err;

	if (!a)
		return 0;
	done = put(o->dfd, o->buf, a, o->base, &err);
	if (err == EINVAL && !done) {
		close(o->dfd);
		o->dfd = -1;
		o->direct_io = 0;
		return lseek(o->fd, o->base, SEEK_SET) < 0 ? cut_back(o, errno) : 0;
	}
	if (err) {
		on_disk(o, done);
		return cut_back(o, err);
	}
	on_disk(o, a);
	keep = o->used - a;
	memmove(o->buf, o->buf + a, keep);
	o->used = keep;
	o->base += (off_t)a;
	size_t first = o->nends;

	while (first && o->ends[first - 1] > a)
		first--;
	for (size_t i = first; i < o->nends; i++)
		o->ends[i - first] = o->ends[i] - (uint32_t)a;
	o->nends -= first;
	return 0;
}

/* Direct: the bytes past the last whole block go to the file buffered and
 * stay in buf, so the next block rewrites them at an aligned offset. */
static int put_tail(struct cap_out *o)
{
	int err;
	size_t done = put(o->fd, o->buf, o->used, o->base, &err);

	if (err) {
		on_disk(o, done);
		return cut_back(o, err);
	}
	o->committed = o->base + (off_t)o->used;
	return 0;
}

int cap_out_commit(struct cap_out *o, int force)
{
	uint64_t t0;
	int err, rc = 0;

	if (o->fd < 0 || !o->used || (!force && o->used < o->thresh))
		return 0;
	t0 = now_ns();
	if (cap_out_direct(o)) {
		rc = put_direct(o);
		if (!rc && cap_out_direct(o) && force && o->used)
			rc = put_tail(o);
		if (rc || cap_out_direct(o))
			goto out;
		/* the file system refused: the rest goes buffered, now */
	}
	/* buffered: buf starts at the file's offset */
	put(o->fd, o->buf, o->used, -1, &err);
	if (err)
		return cut_back(o, err);
	o->committed = o->base + (off_t)o->used;
	o->base = o->committed;
	o->used = 0;
	o->nends = 0;
out:
	if (now_ns() - t0 > CAP_STALL_NS)
		o->stalls++;
	return rc;
}

static void open_direct(struct cap_out *o)
{
	struct stat st;

	if (fstat(o->fd, &st) || !S_ISREG(st.st_mode))
		return;
	o->dfd = open(o->path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (o->dfd < 0)
		return;
	o->thresh = THRESH_DIRECT;
	o->direct_io = 1;
}

int cap_out_open(struct cap_out *o, const char *path, int linktype, unsigned snaplen,
		 size_t max_record, int direct)
{
	int e;

	memset(o, 0, sizeof(*o));
	o->fd = o->dfd = -1;
	snprintf(o->path, sizeof(o->path), "%s", path);
	o->thresh = THRESH_BUFFERED;
	o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->fd < 0)
		goto fail;
	if (direct)
		open_direct(o);  /* where it is refused, the file is buffered */
	o->cap = o->thresh + max_record + CAP_OUT_ALIGN;
	if (posix_memalign((void **)&o->buf, CAP_OUT_ALIGN, o->cap)) {
		o->buf = NULL;
		errno = ENOMEM;
		goto fail;
	}
	if (cap_out_direct(o)) {
		o->max_ends = o->cap / END_EVERY + 2;
		o->ends = malloc(o->max_ends * sizeof(*o->ends));
		if (!o->ends)
			goto fail;
	}
	if (linktype < 0)
		return 0;
	if (pcap_header(o, linktype, snaplen))
		goto fail;
	note_end(o);
	/* the header goes to the file at once: a full disk shows here, not
	 * later (direct, it stays in buf too: the blocks start at 0) */
	if (cap_out_commit(o, 1))
		goto fail;
	return 0;
fail:
	e = errno ? errno : ENOMEM;
	if (o->dfd >= 0)
		close(o->dfd);
	if (o->fd >= 0)
		close(o->fd);
	free(o->buf);
	free(o->ends);
	memset(o, 0, sizeof(*o));
	o->fd = o->dfd = -1;
	errno = e;
	return -1;
}

void cap_out_pcap(struct cap_out *o, uint64_t ts_ns, const uint8_t *frame, size_t caplen,
		  size_t wirelen)
{
	/* a record of a nanosecond pcap file, in the writer's byte order as
	 * the file header (libpcap's) says */
	uint32_t h[4] = { (uint32_t)(ts_ns / 1000000000ull), (uint32_t)(ts_ns % 1000000000ull),
			  (uint32_t)caplen, (uint32_t)wirelen };

	/* cap_out_open sized buf for the threshold plus one record, and every
	 * record is followed by cap_out_commit: this cannot overflow */
	if (o->used + sizeof(h) + caplen <= o->cap) {
		memcpy(o->buf + o->used, h, sizeof(h));
		memcpy(o->buf + o->used + sizeof(h), frame, caplen);
		o->used += sizeof(h) + caplen;
		if (o->ends)
			note_end(o);
	}
	o->records++;
}

void cap_out_bytes(struct cap_out *o, const void *data, size_t len)
{
	if (o->used + len <= o->cap) {
		memcpy(o->buf + o->used, data, len);
		o->used += len;
		if (o->ends)
			note_end(o);
	}
	o->records++;
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
	if (o->dfd >= 0)
		close(o->dfd);
	if (o->fd >= 0 && close(o->fd) && !rc) {
		rc = -1;
		e = errno;
	}
	free(o->buf);
	free(o->ends);
	o->buf = NULL;
	o->ends = NULL;
	o->fd = o->dfd = -1;
	errno = e;
	return rc;
}
