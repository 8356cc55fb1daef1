/* SPDX-License-Identifier: BSD-2-Clause */
/* Out-of-band TCP channel, see oob.h and docs/wire-protocol.md. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include "util/clock.h"
#include "oob.h"

#define RETRY_MS 100
#define SLICE_MS 1000   /* longest poll() while a stop flag is watched */
#define ATTEMPT_MS 1000 /* longest wait for one connect attempt's answer */

static const volatile sig_atomic_t *stop_flag;

void pt_oob_set_stop_flag(const volatile sig_atomic_t *flag)
{
	stop_flag = flag;
}

static int stopped(void)
{
	return stop_flag && *stop_flag;
}

/* The single place error texts are written; returns -err. */
static int fail(struct pt_oob *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct pt_oob *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -err;
}

void pt_oob_init(struct pt_oob *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->lfd = -1;
	c->timeout_ms = PT_OOB_DEF_TIMEOUT_MS;
	c->connect_timeout_ms = PT_OOB_DEF_TIMEOUT_MS;
	c->version = WIRE_VERSION;
	pt_peer_rules_init(&c->peer, NULL, c->version);
}

void pt_oob_set_source(struct pt_oob *c, const char *ip)
{
	c->source = ip;
}

void pt_oob_set_timeout(struct pt_oob *c, int ms)
{
	c->timeout_ms = ms;
	c->connect_timeout_ms = ms;
}

void pt_oob_set_version(struct pt_oob *c, const char *version)
{
	c->version = version ? version : WIRE_VERSION;
}

const char *pt_oob_strerror(const struct pt_oob *c)
{
	return c->err[0] ? c->err : "no error";
}

void pt_oob_use_msg(struct pt_oob *c, const struct pt_oob_msg_ops *ops, void *t,
		    int is_server, int raw_keys)
{
	c->msg = ops;
	c->msg_ctx = t;
	c->is_server = is_server;
	c->raw_keys = raw_keys;
}

void pt_oob_close(struct pt_oob *c)
{
	if (c->msg)
		c->msg->close(c->msg_ctx);
	c->msg = NULL;
	c->msg_ctx = NULL;
	if (c->fd >= 0)
		close(c->fd);
	if (c->lfd >= 0)
		close(c->lfd);
	c->fd = -1;
	c->lfd = -1;
}

/* Deadline in ns from a timeout; 0 means "none". */
static uint64_t deadline_of(int ms)
{
	return ms < 0 ? 0 : pt_now_ns() + (uint64_t)ms * 1000000ull;
}

/* Milliseconds left for poll(): -1 without deadline, 0 once expired. */
static int ms_left(uint64_t deadline)
{
	uint64_t now;

	if (!deadline)
		return -1;
	now = pt_now_ns();
	if (now >= deadline)
		return 0;
	return (int)((deadline - now + 999999) / 1000000);
}

/* Wait for events on fd until the deadline: 1 ready, 0 timeout, <0 -errno. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int left = ms_left(deadline);
		int r;

		if (left == 0)
			return 0;
		if (stopped())
			return -EINTR;
		/* a signal landing just before poll() is seen after one slice */
		if (stop_flag && (left < 0 || left > SLICE_MS))
			left = SLICE_MS;
		r = poll(&p, 1, left);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

static int resolve(struct pt_oob *c, const char *host, int port, int family,
		   int passive, struct addrinfo **res)
{
	struct addrinfo hints = {
		.ai_family = family,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = passive ? AI_PASSIVE : 0,
	};
	char ps[16];
	int r;

	if (port < 0 || port > 65535)
		return fail(c, EINVAL, "invalid port %d", port);
	snprintf(ps, sizeof(ps), "%d", port);
	r = getaddrinfo(host, ps, &hints, res);
	if (r)
		return fail(c, EHOSTUNREACH, "cannot resolve '%s' port %d: %s",
			    host ? host : "*", port, gai_strerror(r));
	return 0;
}

int pt_oob_listen(struct pt_oob *c, const char *host, int port, int family)
{
	struct addrinfo *res, *ai;
	int r, err = 0, one = 1;

	c->is_server = 1;
	r = resolve(c, host, port, family, 1, &res);
	if (r)
		return r;
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
				ai->ai_protocol);

		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 1)) {
			c->lfd = fd;
			break;
		}
		err = errno;
		close(fd);
	}
	freeaddrinfo(res);
	if (c->lfd < 0)
		return fail(c, err ? err : EADDRNOTAVAIL,
			    "cannot listen on port %d: %s", port,
			    strerror(err ? err : EADDRNOTAVAIL));
	return 0;
}

int pt_oob_listen_port(const struct pt_oob *c)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (c->lfd < 0 || getsockname(c->lfd, (struct sockaddr *)&ss, &len))
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -1;
}

int pt_oob_accept(struct pt_oob *c)
{
	uint64_t deadline = deadline_of(c->connect_timeout_ms);
	int r, fd;

	if (c->lfd < 0)
		return fail(c, EINVAL, "accept without a listening socket");
	for (;;) {
		r = wait_fd(c->lfd, POLLIN, deadline);
		if (r == 0)
			return fail(c, ETIMEDOUT,
				    "no client connected within %d ms",
				    c->connect_timeout_ms);
		if (r < 0)
			return fail(c, -r, "waiting for a client: %s",
				    strerror(-r));
		fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0)
			break;
		/* The client may have gone between poll and accept. */
		if (errno != EINTR && errno != EAGAIN &&
		    errno != ECONNABORTED && errno != EWOULDBLOCK)
			return fail(c, errno, "accept failed: %s",
				    strerror(errno));
	}
	close(c->lfd); /* one client per run, like upstream */
	c->lfd = -1;
	c->fd = fd;
	return 0;
}

/* One non-blocking connect attempt: 0 connected (fd kept), else errno. */
static int try_connect(const struct addrinfo *ai, const struct addrinfo *src,
		       uint64_t deadline, int *out)
{
	int fd, err = 0;
	socklen_t len = sizeof(err);

	fd = socket(ai->ai_family,
		    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    ai->ai_protocol);
	if (fd < 0)
		return errno;
	if (src && bind(fd, src->ai_addr, src->ai_addrlen)) {
		err = errno;
		close(fd);
		return err;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		int r;

		if (errno != EINPROGRESS) {
			err = errno;
			close(fd);
			return err;
		}
		r = wait_fd(fd, POLLOUT, deadline);
		if (r <= 0) {
			close(fd);
			return r ? -r : ETIMEDOUT;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = errno;
		if (err) {
			close(fd);
			return err;
		}
	}
	*out = fd;
	return 0;
}

/* Refused: nobody listens yet; timed out: the attempt's SYN or RST was
 * lost. A reset means a server existed and went away (it serves one client
 * only), so that is final. */
static int retryable(int err)
{
	return err == ECONNREFUSED || err == ETIMEDOUT || err == EINTR || err == EAGAIN;
}

int pt_oob_connect(struct pt_oob *c, const char *host, int port, int family)
{
	uint64_t deadline = deadline_of(c->connect_timeout_ms);
	struct addrinfo *res, *ai, *src = NULL;
	int r, err = 0;

	c->is_server = 0;
	if (!host)
		return fail(c, EINVAL, "connect needs a server name");
	if (c->source) {
		struct addrinfo hints = { .ai_family = family, .ai_socktype = SOCK_STREAM,
					  .ai_flags = AI_NUMERICHOST };

		r = getaddrinfo(c->source, NULL, &hints, &src);
		if (r)
			return fail(c, EINVAL, "invalid source address '%s': %s", c->source,
				    gai_strerror(r));
		family = src->ai_family;   /* only server addresses it can reach */
	}
	r = resolve(c, host, port, family, 0, &res);
	if (r) {
		if (src)
			freeaddrinfo(src);
		return r;
	}
	err = EAFNOSUPPORT;
	for (;;) {
		for (ai = res; ai; ai = ai->ai_next) {
			/* A bounded attempt: a lost SYN or RST would leave it in the
			 * kernel's SYN backoff (1, 3, 7 s...) past the moment the
			 * server starts listening. */
			uint64_t t = deadline_of(ATTEMPT_MS);

			err = try_connect(ai, src, deadline && deadline < t ? deadline : t, &c->fd);
			if (!err)
				break;
		}
		if (!err || !retryable(err) || ms_left(deadline) == 0 || stopped())
			break;
		/* The server may not be listening yet: try again shortly. */
		r = ms_left(deadline);
		usleep((useconds_t)(r < 0 || r > RETRY_MS ? RETRY_MS : r) *
		       1000);
	}
	freeaddrinfo(res);
	if (src)
		freeaddrinfo(src);
	if (err && stopped())
		return fail(c, EINTR, "interrupted while connecting to %s port %d", host, port);
	if (err && c->source && !retryable(err))
		return fail(c, err, "could not connect to %s port %d from %s: %s",
			    host, port, c->source, strerror(err));
	if (err && retryable(err))
		return fail(c, ETIMEDOUT,
			    "could not connect to %s port %d within %d ms: %s",
			    host, port, c->connect_timeout_ms, strerror(err));
	if (err)
		return fail(c, err, "could not connect to %s port %d: %s",
			    host, port, strerror(err));
	return 0;
}

/* One message through the message transport. */
static int msg_xfer(struct pt_oob *c, int sending, void *buf, size_t n,
		    const char *what)
{
	uint64_t deadline = deadline_of(c->timeout_ms);
	char why[160] = "";
	int r;

	r = sending ? c->msg->send(c->msg_ctx, buf, n, deadline, why, sizeof(why))
		    : c->msg->recv(c->msg_ctx, buf, n, deadline, why, sizeof(why));
	if (r == -ETIMEDOUT)
		return fail(c, ETIMEDOUT, "timed out after %d ms %s the %s: peer not responding%s%s",
			    c->timeout_ms, sending ? "sending" : "receiving", what,
			    why[0] ? ": " : "", why);
	if (r)
		return fail(c, -r, "error %s the %s: %s", sending ? "sending" : "receiving",
			    what, why[0] ? why : strerror(-r));
	return 0;
}

/* Move exactly n bytes in one direction before the deadline. */
static int xfer(struct pt_oob *c, int sending, void *buf, size_t n,
		const char *what)
{
	uint64_t deadline = deadline_of(c->timeout_ms);
	const char *dir = sending ? "sending" : "receiving";
	size_t done = 0;

	if (c->msg)
		return msg_xfer(c, sending, buf, n, what);
	while (done < n) {
		char *p = (char *)buf + done;
		ssize_t r;
		int w;

		if (sending)
			r = send(c->fd, p, n - done,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		else
			r = recv(c->fd, p, n - done, MSG_DONTWAIT);
		if (r > 0) {
			done += (size_t)r;
			continue;
		}
		if (r == 0)
			return fail(c, ECONNRESET,
				    "peer closed the connection while we were receiving the %s (got %zu of %zu bytes)",
				    what, done, n);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return fail(c, errno, "error %s the %s: %s", dir, what,
				    strerror(errno));
		w = wait_fd(c->fd, sending ? POLLOUT : POLLIN, deadline);
		if (w == 0)
			return fail(c, ETIMEDOUT,
				    "timed out after %d ms %s the %s (%zu of %zu bytes done): peer not responding",
				    c->timeout_ms, dir, what, done, n);
		if (w < 0)
			return fail(c, -w, "error %s the %s: %s", dir, what,
				    strerror(-w));
	}
	return 0;
}

int pt_oob_exchange(struct pt_oob *c, const void *mine, void *theirs,
		    size_t n, const char *what)
{
	int r;

	if (!what)
		what = "message";
	if (c->fd < 0 && !c->msg)
		return fail(c, ENOTCONN, "cannot exchange the %s: not connected",
			    what);
	if (!n)
		return 0;
	/* Client writes first, server reads first (docs/wire-protocol.md §1);
	 * a server told to write first cannot deadlock a peer of either order:
	 * each side's message is small and lands in the socket's buffer. */
	if (c->is_server && !(c->write_first && !c->msg)) {
		r = xfer(c, 0, theirs, n, what);
		return r ? r : xfer(c, 1, (void *)mine, n, what);
	}
	r = xfer(c, 1, (void *)mine, n, what);
	return r ? r : xfer(c, 0, theirs, n, what);
}

int pt_oob_xchg_versions(struct pt_oob *c, int dont_xchg)
{
	uint8_t mine[PT_VERSION_LEN], theirs[PT_VERSION_LEN];
	char s[PT_VERSION_LEN + 1];
	int r;

	if (dont_xchg) {
		pt_peer_rules_init(&c->peer, NULL, c->version);
		return 0;
	}
	pt_version_encode(c->version, mine);
	r = pt_oob_exchange(c, mine, theirs, sizeof(mine), "version");
	if (r)
		return r;
	pt_version_decode(theirs, s);
	if (pt_peer_rules_init(&c->peer, s, c->version))
		return fail(c, EPROTO, "%s", c->peer.why);
	return 0;
}

static int xchg_one_sysdata(struct pt_oob *c, int32_t *v, const char *what)
{
	uint8_t mine[4], theirs[4];
	int32_t rem;
	int r;

	pt_sysdata_encode(*v, mine);
	r = pt_oob_exchange(c, mine, theirs, sizeof(mine), what);
	if (r)
		return r;
	if (pt_sysdata_parse(theirs, &rem))
		return fail(c, EPROTO, "peer sent an invalid %s (%d)", what,
			    (int32_t)pt_be32_get(theirs));
	*v = pt_sysdata_max(*v, rem);
	return 0;
}

int pt_oob_xchg_sysdata(struct pt_oob *c, int32_t *page_size,
			int32_t *cache_line)
{
	int r;

	if (!c->peer.sysdata)
		return 0;
	r = xchg_one_sysdata(c, page_size, "page size");
	return r ? r : xchg_one_sysdata(c, cache_line, "cache line size");
}

int pt_oob_xchg_mtu(struct pt_oob *c, int *mtu)
{
	char mine[PT_MTU_MSG_MAX], theirs[PT_MTU_MSG_MAX + 1] = { 0 };
	char shown[PT_MTU_MSG_MAX + 1];
	size_t n = c->peer.mtu_msg_size;
	int rem, r;

	if (!c->peer.mtu_xchg)
		return 0;
	if (pt_mtu_encode(*mtu, n, mine) < 0)
		return fail(c, EINVAL, "invalid local MTU enum %d", *mtu);
	r = pt_oob_exchange(c, mine, theirs, n, "MTU");
	if (r)
		return r;
	if (pt_mtu_parse(theirs, n, &rem)) {
		pt_str_printable(theirs, shown, sizeof(shown));
		return fail(c, EPROTO,
			    "peer sent an invalid %zu-byte MTU message '%s' (desynchronised stream?)",
			    n, shown);
	}
	*mtu = pt_mtu_min(*mtu, rem);
	return 0;
}

/* rdma_cm modes: the raw struct in the peer's layout (docs/wire-protocol.md §9.2). */
static int xchg_raw_key(struct pt_oob *c, const struct pt_key *mine,
			struct pt_key *theirs, const char *what)
{
	static const struct pt_key zero;
	uint8_t out[PT_CM_KEY_MAX], in[PT_CM_KEY_MAX];
	size_t n = c->peer.cm_key_size;
	int r;

	if (pt_key_raw_encode(mine ? mine : &zero, n, out) < 0)
		return fail(c, EINVAL, "cannot encode the %s (QPN/PSN wider than 24 bits)", what);
	r = pt_oob_exchange(c, out, in, n, what);
	if (r == -EPROTO) {
		char first[sizeof(c->err)];

		snprintf(first, sizeof(first), "%s", c->err);
		return fail(c, EPROTO,
			    "%s; raw keys are 56 bytes up to perftest 6.28 and 64 from 6.29, and the peer announced '%s'",
			    first, c->peer.known ? c->peer.shown : "nothing (--dont_xchg_versions)");
	}
	if (r)
		return r;
	/* a barrier's content is never read upstream; the message transport
	 * already caught a wrong size, all that a parse would add here */
	if (theirs && pt_key_raw_parse(in, n, n, theirs))
		return fail(c, EPROTO, "peer sent a malformed %zu-byte raw %s (LID, QPN or PSN out of range)",
			    n, what);
	return 0;
}

static int xchg_key(struct pt_oob *c, int use_gid, const struct pt_key *mine,
		    struct pt_key *theirs, const char *what)
{
	static const struct pt_key zero;
	char out[PT_KEY_MSG_MAX], in[PT_KEY_MSG_MAX + 1] = { 0 };
	char shown[PT_KEY_MSG_MAX + 1];
	/* as 6.29: the local option picks the form, where either side is 6.29+ */
	int dv = c->data_validation && c->peer.key_dv_629;
	size_t n = pt_key_msg_size_dv(use_gid, dv);
	int r;

	if (c->raw_keys)
		return xchg_raw_key(c, mine, theirs, what);
	if (pt_key_encode_dv(mine ? mine : &zero, use_gid, dv, out, sizeof(out)) < 0)
		return fail(c, EINVAL,
			    "cannot encode the %s (QPN/PSN wider than 24 bits)",
			    what);
	r = pt_oob_exchange(c, out, in, n, what);
	if (r)
		return r;
	if (pt_key_parse_dv(in, n, use_gid, dv, theirs)) {
		pt_str_printable(in, shown, sizeof(shown));
		return fail(c, EPROTO,
			    "peer sent a malformed %zu-byte %s '%s' (GID setting -x differs between the sides,"
			    " --data_validation is given on one side of a 6.29 run, or the stream is"
			    " desynchronised)",
			    n, what, shown);
	}
	return 0;
}

int pt_oob_xchg_key(struct pt_oob *c, int use_gid, const struct pt_key *mine,
		    struct pt_key *theirs)
{
	return xchg_key(c, use_gid, mine, theirs, "key message");
}

int pt_oob_barrier(struct pt_oob *c, int use_gid, const struct pt_key *mine)
{
	struct pt_key dropped;

	if (c->raw_keys)
		return xchg_raw_key(c, mine, NULL, "barrier");
	return xchg_key(c, use_gid, mine, &dropped, "barrier");
}

/* How long a server waits for the last 8 bytes of a 320-byte block after
 * the first 312: the peer wrote them at once, and a 312-byte peer sends
 * nothing more until it hears from us. */
#define NEG_TAIL_WAIT_MS 500

int pt_oob_xchg_negotiate(struct pt_oob *c, const struct pt_negotiate *mine,
			  struct pt_negotiate *theirs)
{
	static const char what[] = "parameter negotiation block";
	uint8_t out[PT_NEG_SIZE_MLX5DV], in[PT_NEG_SIZE_MLX5DV];
	size_t n = PT_NEG_SIZE_MLX5DV;
	int r;

	if (c->is_server && !c->msg && c->fd >= 0) {
		r = xfer(c, 0, in, PT_NEG_SIZE, what);
		if (r)
			return r;
		if (wait_fd(c->fd, POLLIN, deadline_of(NEG_TAIL_WAIT_MS)) > 0) {
			r = xfer(c, 0, in + PT_NEG_SIZE, n - PT_NEG_SIZE, what);
			if (r)
				return r;
		} else {
			n = PT_NEG_SIZE;
		}
		if (pt_neg_encode(mine, n, out) < 0)
			return fail(c, EINVAL, "cannot encode our %s", what);
		r = xfer(c, 1, out, n, what);
	} else {
		if (pt_neg_encode(mine, n, out) < 0)
			return fail(c, EINVAL, "cannot encode our %s", what);
		r = pt_oob_exchange(c, out, in, n, what);
	}
	if (r)
		return r;
	if (!c->peer.neg_629)
		pt_neg_drop_629_fields(in, n);
	if (pt_neg_parse(in, n, theirs))
		return fail(c, EPROTO, "peer sent an invalid %zu-byte %s (a value out of range)", n, what);
	return 0;
}

int pt_oob_xchg_bw_report(struct pt_oob *c, const struct pt_bw_report *mine,
			  struct pt_bw_report *theirs)
{
	static const struct { enum pt_bw_field f; const char *what; } fields[] = {
		{ PT_BW_SIZE, "report size" }, { PT_BW_ITERS, "report iterations" },
		{ PT_BW_PEAK, "report peak bandwidth" }, { PT_BW_AVG, "report average bandwidth" },
		{ PT_BW_MSGRATE, "report message rate" },
		{ PT_BW_AVG_P1, "report port 1 bandwidth" }, { PT_BW_MSGRATE_P1, "report port 1 message rate" },
		{ PT_BW_AVG_P2, "report port 2 bandwidth" }, { PT_BW_MSGRATE_P2, "report port 2 message rate" },
	};
	/* --report-per-port adds the four per-port fields (both sides have it) */
	int nfields = mine->per_port ? 9 : PT_BW_NFIELDS;
	uint8_t out[8], in[8];
	char why[128];

	if (theirs)
		theirs->per_port = mine->per_port;
	for (int k = 0; k < nfields; k++) {
		int n = pt_bw_field_encode(mine, fields[k].f, c->peer.iters_size, out);
		int r;

		if (n < 0)
			return fail(c, EINVAL, "bad report field width");
		r = pt_oob_exchange(c, out, in, (size_t)n, fields[k].what);
		if (r)
			return r;
		if (theirs)
			pt_bw_field_decode(theirs, fields[k].f, c->peer.iters_size, in);
	}
	if (theirs && pt_bw_report_check(theirs, why, sizeof(why)))
		return fail(c, EPROTO, "peer sent an invalid BW report: %s", why);
	return 0;
}

int pt_oob_keepalive(struct pt_oob *c, int idle_s)
{
	int on = 1, idle = idle_s, intvl = idle_s > 1 ? idle_s / 2 : 1, cnt = 3;

	if (c->msg)
		return 0;   /* the transport reports a peer that goes away */
	if (c->fd < 0)
		return -EINVAL;
	if (setsockopt(c->fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) ||
	    setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) ||
	    setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) ||
	    setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)))
		return fail(c, errno, "keepalive: %s", strerror(errno));
	return 0;
}
