/* SPDX-License-Identifier: BSD-2-Clause */
/* The real OOB read loops (oob.c) against a peer whose bytes come from the
 * fuzzer: the preamble (with N when the peer is 6.28), keys, barriers and
 * the BW report, in session order.
 * fuzz-sources: perftest/wire/wire.c perftest/wire/oob.c util/clock.c perftest/wire/negotiate.c
 * fuzz-cflags: -Wl,--wrap=recv -Wl,--wrap=send
 * fuzz-flags: -max_len=1024
 *
 * Input: byte 0 = flags (role, -x, --dont_xchg_versions, our version, local
 * MTU), byte 1 = number of QPs and the seed of the short read/write
 * schedule, then the peer's byte stream. The peer's end is written in full
 * and shut down, so every exchange ends in success, a clean refusal
 * (-EPROTO) or end of stream (-ECONNRESET); never a timeout or a crash.
 * recv() and send() are wrapped to return short counts, EINTR and EAGAIN,
 * so the partial-transfer paths run deterministically. */
#include <errno.h>
#include <math.h>
#include <unistd.h>
#include <sys/socket.h>
#include "fuzz.h"
#include "perftest/wire/oob.h"

static const char *const versions[] = { NULL, "6.06", "5.70", "6.29" };

/* ------------------------------------------------- short read schedule -- */

static uint32_t sched; /* 0: plain calls */

static ssize_t shorten(size_t *n)
{
	uint32_t x = sched;

	if (!x)
		return 0;
	/* xorshift32: the same input always gives the same schedule */
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	sched = x;
	if ((x & 15) == 0) {
		errno = EINTR;
		return -1;
	}
	if ((x & 15) == 1) {
		errno = EAGAIN;
		return -1;
	}
	if (*n > 1)
		*n = 1 + (x >> 8) % *n;
	return 0;
}

ssize_t __real_recv(int fd, void *buf, size_t n, int flags);
ssize_t __real_send(int fd, const void *buf, size_t n, int flags);

ssize_t __wrap_recv(int fd, void *buf, size_t n, int flags);
ssize_t __wrap_recv(int fd, void *buf, size_t n, int flags)
{
	if (shorten(&n))
		return -1;
	return __real_recv(fd, buf, n, flags);
}

ssize_t __wrap_send(int fd, const void *buf, size_t n, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t n, int flags)
{
	if (shorten(&n))
		return -1;
	return __real_send(fd, buf, n, flags);
}

/* --------------------------------------------------------------- steps -- */

/* FUZZ_VERBOSE=1 in the environment: say how far each input got. */
static int verbose = -1;

/* A failed exchange must say why and be one of the two expected kinds. */
static int failed(const struct pt_oob *c, int rc)
{
	if (!rc)
		return 0;
	if (verbose)
		fprintf(stderr, "oob: %d: %s\n", rc, pt_oob_strerror(c));
	if (rc != -ECONNRESET && rc != -EPROTO)
		fprintf(stderr, "unexpected error %d: %s\n", rc, pt_oob_strerror(c));
	FUZZ_ASSERT(rc == -ECONNRESET || rc == -EPROTO);
	FUZZ_ASSERT(c->err[0] != '\0' && memchr(c->err, '\0', sizeof(c->err)));
	return 1;
}

static int preamble(struct pt_oob *c, int dont_xchg, int local_mtu)
{
	int32_t page = 4096, line = 64;
	int mtu = local_mtu;

	if (failed(c, pt_oob_xchg_versions(c, dont_xchg)))
		return -1;
	FUZZ_ASSERT(c->peer.compatible);
	if (c->peer.sysdata) {
		if (failed(c, pt_oob_xchg_sysdata(c, &page, &line)))
			return -1;
		FUZZ_ASSERT(page >= 4096 && page <= PT_SYSDATA_MAX);
		FUZZ_ASSERT(line >= 64 && line <= PT_SYSDATA_MAX);
	}
	if (c->peer.mtu_xchg) {
		if (failed(c, pt_oob_xchg_mtu(c, &mtu)))
			return -1;
		FUZZ_ASSERT(mtu >= 1 && mtu <= local_mtu);
	}
	if (c->peer.negotiate) {
		struct pt_negotiate mine = { .v = { [PT_NEG_SIZE_F] = 65536, [PT_NEG_ITERS] = 5000,
						   [PT_NEG_NUM_QPS] = 1 } }, theirs;

		if (failed(c, pt_oob_xchg_negotiate(c, &mine, &theirs)))
			return -1;
	}
	return 0;
}

static int keys(struct pt_oob *c, int use_gid, int nqps)
{
	struct pt_key mine = { .lid = 1, .qpn = 0x123456, .psn = 0xabcdef,
			       .rkey = 0xdeadbeef, .vaddr = 0x7f0000001000ull };
	struct pt_key theirs;

	for (int i = 0; i < nqps; i++) {
		memset(&theirs, 0xa5, sizeof(theirs));
		int rc = pt_oob_xchg_key(c, use_gid, &mine, &theirs);

		if (failed(c, rc)) {
			/* a malformed key is not half used */
			if (rc == -EPROTO)
				FUZZ_ASSERT(fuzz_all_zero(&theirs, sizeof(theirs)));
			return -1;
		}
		FUZZ_ASSERT(theirs.qpn <= 0xffffff && theirs.psn <= 0xffffff);
		if (!use_gid)
			FUZZ_ASSERT(fuzz_all_zero(theirs.gid, sizeof(theirs.gid)));
	}
	return failed(c, pt_oob_barrier(c, use_gid, NULL)) ? -1 : 0;
}

static void report(struct pt_oob *c, int use_gid)
{
	const struct pt_bw_report mine = { .size = 65536, .iters = 5000,
		.bw_peak = 11.5, .bw_avg = 10.25, .msg_rate = 0.0195 };
	struct pt_bw_report theirs;

	memset(&theirs, 0, sizeof(theirs));
	if (failed(c, pt_oob_xchg_bw_report(c, &mine, &theirs)))
		return;
	FUZZ_ASSERT(pt_bw_report_check(&theirs, NULL, 0) == 0);
	if (c->peer.iters_size == 4)
		FUZZ_ASSERT(theirs.iters <= UINT32_MAX);
	if (!failed(c, pt_oob_barrier(c, use_gid, NULL)) && verbose)
		fprintf(stderr, "oob: whole session done\n");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_oob c;
	int sv[2], flags, use_gid, local_mtu;

	if (verbose < 0)
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (size < 2)
		return 0;
	flags = data[0];
	use_gid = !!(flags & 2);
	local_mtu = 1 + (flags >> 5) % 5;
	FUZZ_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	/* the peer says everything at once and hangs up */
	sched = 0;
	FUZZ_ASSERT(write(sv[1], data + 2, size - 2) == (ssize_t)(size - 2));
	FUZZ_ASSERT(shutdown(sv[1], SHUT_WR) == 0);
	sched = data[1] >> 2;

	pt_oob_init(&c);
	pt_oob_set_timeout(&c, 2000); /* reached only if a read loop loses track */
	pt_oob_set_version(&c, versions[(flags >> 3) & 3]);
	c.fd = sv[0];
	c.is_server = flags & 1;
	if (!preamble(&c, !!(flags & 4), local_mtu) &&
	    !keys(&c, use_gid, 1 + (data[1] & 3)))
		report(&c, use_gid);
	sched = 0;
	pt_oob_close(&c);
	close(sv[1]);
	return 0;
}
