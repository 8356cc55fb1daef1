/* SPDX-License-Identifier: BSD-2-Clause */
/* streamgen: N sources x M groups of sequence-numbered UDP multicast
 * datagrams at a paced rate, on plain UDP sockets (capture/streamgen.1).
 * Each datagram starts with the header of rdmacap's `--preset seed`
 * (capture/seq.h): a 64-byte application header whose first 8 bytes are the
 * sequence number, big endian. --skip leaves numbers out on purpose, so a
 * capture's loss count can be checked against a known figure. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "seq.h"

#define MAX_BURST 16   /* packets sent back to back when behind schedule */
/* sendmmsg batches: at most MAX_MMSG datagrams per call, and no more than
 * BATCH_NS of the schedule, so a paced stream stays spread out (at the
 * default 1000 pps a batch is one datagram, as with sendto) */
#define MAX_MMSG 64
#define BATCH_NS 50000ull

#define MAX 64

static volatile sig_atomic_t stop;
static void on_signal(int s) { (void)s; stop = 1; }

static void usage(FILE *to)
{
	fputs("usage: streamgen -g GROUP:PORT [-g ...] [-s SRC ...] [options]\n"
	      "  -g, --group GROUP:PORT  a multicast destination; repeat for more\n"
	      "  -s, --source ADDR       send from this local address; repeat for more\n"
	      "                          (default: one source, the route's address)\n"
	      "  -i, --netdev NAME       send through this netdev (IP_MULTICAST_IF)\n"
	      "  -n, --count N           datagrams per (source, group) stream (default 1000)\n"
	      "  -r, --rate PPS          datagrams per second over all streams (default 1000; 0: no pacing)\n"
	      "  -l, --size BYTES        UDP payload bytes, >= 64 (default 1024)\n"
	      "      --skip LIST         sequence numbers never sent, e.g. 10,11,500\n"
	      "      --first N           first sequence number (default 0)\n"
	      "      --ttl N             multicast TTL (default 1)\n", to);
}

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "streamgen: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return 2;
}

static int number(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' || *out > max ? -1 : 0;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* Datagrams waiting for one sendmmsg: buf holds n of them, to[i] their
 * destinations, all through socket fd. */
struct stream_batch {
	int fd;
	unsigned n;
	uint8_t *buf;
	const struct sockaddr_in *to[MAX_MMSG];
};

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Wait for the batch's due time, then send all of it (a full socket
 * buffer is waited out): the datagrams sent (fewer after SIGINT), or -1
 * after a send error (printed). */
static int send_batch(struct stream_batch *b, size_t size, uint64_t gap_ns, uint64_t *due)
{
	struct mmsghdr msg[MAX_MMSG];
	struct iovec iov[MAX_MMSG];
	unsigned done = 0;

	if (gap_ns) {
		uint64_t t = mono_ns();

		*due += gap_ns;
		/* behind by more than a burst (descheduled): forget the debt
		 * rather than flood the receiver's backlog */
		if (t > *due + MAX_BURST * gap_ns)
			*due = t;
		if (t < *due) {
			struct timespec d = { .tv_sec = (time_t)(*due / 1000000000ull),
					      .tv_nsec = (long)(*due % 1000000000ull) };

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL);
		}
		*due += (b->n - 1) * gap_ns;
	}
	memset(msg, 0, sizeof(msg[0]) * b->n);
	for (unsigned i = 0; i < b->n; i++) {
		iov[i] = (struct iovec){ .iov_base = b->buf + (size_t)i * size, .iov_len = size };
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
		msg[i].msg_hdr.msg_name = (void *)b->to[i];
		msg[i].msg_hdr.msg_namelen = sizeof(*b->to[i]);
	}
	while (done < b->n) {
		int r = sendmmsg(b->fd, msg + done, b->n - done, 0);

		if (r > 0) {
			done += (unsigned)r;
			continue;
		}
		if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) {
			if (stop)
				break;
			continue;
		}
		fprintf(stderr, "streamgen: send to %s: %s\n", inet_ntoa(b->to[done]->sin_addr), strerror(errno));
		return -1;
	}
	return (int)done;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "group", 1, NULL, 'g' }, { "source", 1, NULL, 's' }, { "netdev", 1, NULL, 'i' },
		{ "count", 1, NULL, 'n' }, { "rate", 1, NULL, 'r' }, { "size", 1, NULL, 'l' },
		{ "skip", 1, NULL, 'S' }, { "first", 1, NULL, 'F' }, { "ttl", 1, NULL, 'T' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 }
	};
	struct sockaddr_in groups[MAX], srcs[MAX];
	uint64_t skip[1024];
	int ng = 0, ns = 0, nskip = 0, c, fds[MAX];
	unsigned long long count = 1000, rate = 1000, size = 1024, first = 0, ttl = 1, v;
	const char *netdev = NULL;

	while ((c = getopt_long(argc, argv, "g:s:i:n:r:l:h", lo, NULL)) != -1) {
		switch (c) {
		case 'g': {
			char buf[64], *colon;

			if (ng >= MAX || strlen(optarg) >= sizeof(buf))
				return bad("too many groups or a bad one: '%s'", optarg);
			strcpy(buf, optarg);
			colon = strchr(buf, ':');
			if (!colon || number(colon + 1, 65535, &v) || !v)
				return bad("group '%s' needs a port: GROUP:PORT", optarg);
			*colon = 0;
			groups[ng] = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t)v) };
			if (inet_pton(AF_INET, buf, &groups[ng].sin_addr) != 1 ||
			    !IN_MULTICAST(ntohl(groups[ng].sin_addr.s_addr)))
				return bad("group '%s' is not an IPv4 multicast address", optarg);
			ng++;
			break;
		}
		case 's':
			if (ns >= MAX)
				return bad("more than 64 sources%s", "");
			srcs[ns] = (struct sockaddr_in){ .sin_family = AF_INET };
			if (inet_pton(AF_INET, optarg, &srcs[ns].sin_addr) != 1)
				return bad("source '%s' is not an IPv4 address", optarg);
			ns++;
			break;
		case 'i': netdev = optarg; break;
		case 'n':
			if (number(optarg, UINT32_MAX, &count) || !count)
				return bad("invalid --count '%s'", optarg);
			break;
		case 'r':
			if (number(optarg, 100000000, &rate))
				return bad("invalid --rate '%s'", optarg);
			break;
		case 'l':
			if (number(optarg, 65507, &size) || size < CAP_SEED_APP_HEADER)
				return bad("invalid --size '%s': 64 to 65507", optarg);
			break;
		case 'S': {
			char *save = NULL, *buf = strdup(optarg);

			for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				if (nskip >= 1024 || number(t, UINT64_MAX, &v)) {
					free(buf);
					return bad("invalid --skip '%s'", optarg);
				}
				skip[nskip++] = v;
			}
			free(buf);
			break;
		}
		case 'F':
			if (number(optarg, UINT64_MAX / 2, &first))
				return bad("invalid --first '%s'", optarg);
			break;
		case 'T':
			if (number(optarg, 255, &ttl))
				return bad("invalid --ttl '%s'", optarg);
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		return bad("unexpected argument '%s'", argv[optind]);
	if (!ng)
		return bad("no group: -g GROUP:PORT%s", "");
	if (!ns)
		srcs[ns++] = (struct sockaddr_in){ .sin_family = AF_INET };
	unsigned ifindex = netdev ? if_nametoindex(netdev) : 0;

	if (netdev && !ifindex)
		return bad("unknown netdev '%s'", netdev);
	for (int s = 0; s < ns; s++) {
		struct ip_mreqn m = { .imr_ifindex = (int)ifindex };
		int t = (int)ttl, loop = 0;

		fds[s] = socket(AF_INET, SOCK_DGRAM, 0);
		if (fds[s] < 0 || bind(fds[s], (struct sockaddr *)&srcs[s], sizeof(srcs[s])) ||
		    setsockopt(fds[s], IPPROTO_IP, IP_MULTICAST_TTL, &t, sizeof(t)) ||
		    setsockopt(fds[s], IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop)) ||
		    (ifindex && setsockopt(fds[s], IPPROTO_IP, IP_MULTICAST_IF, &m, sizeof(m)))) {
			fprintf(stderr, "streamgen: source %s: %s\n", inet_ntoa(srcs[s].sin_addr), strerror(errno));
			return 1;
		}
	}
	signal(SIGINT, on_signal);
	struct timespec now;
	uint64_t sent = 0, gap_ns = rate ? 1000000000ull / rate : 0, skipped = 0, due;
	unsigned batch_max = gap_ns ? (unsigned)(BATCH_NS / gap_ns) : MAX_MMSG;
	struct stream_batch b = { .fd = -1 };

	if (batch_max < 1)
		batch_max = 1;
	if (batch_max > MAX_MMSG)
		batch_max = MAX_MMSG;
	b.buf = calloc(batch_max, size);
	if (!b.buf) {
		fprintf(stderr, "streamgen: out of memory for %u datagrams of %llu B\n", batch_max, size);
		return 1;
	}
	for (unsigned k = 0; k < batch_max; k++)
		for (size_t i = CAP_SEED_APP_HEADER; i < size; i++)
			b.buf[k * size + i] = (uint8_t)i;
	/* Pacing by deadline: each batch is due its datagrams' gaps after the
	 * one before. Sleep only when ahead of it (a sleep per packet, with the
	 * default 50 us timer slack, capped the rate near 50 000 pps); when
	 * behind, send at once, at most MAX_BURST packets' worth. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &now);
	due = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	for (uint64_t seq = first; seq < first + count && !stop; seq++) {
		bool skipped_here = false;

		for (int k = 0; k < nskip; k++)
			skipped_here |= skip[k] == seq;
		if (skipped_here) {
			skipped++;
			continue;
		}
		for (int s = 0; s < ns; s++)
			for (int g = 0; g < ng; g++) {
				/* a batch goes to one socket: flush at a source change */
				if (b.n && (b.fd != fds[s] || b.n == batch_max)) {
					int r = send_batch(&b, size, gap_ns, &due);

					if (r < 0)
						return 1;
					sent += (unsigned)r;
					b.n = 0;
				}
				uint8_t *d = b.buf + (size_t)b.n * size;

				put64(d, seq);
				memcpy(d + 8, "PTSG", 4);
				d[12] = (uint8_t)s;
				d[13] = (uint8_t)g;
				b.fd = fds[s];
				b.to[b.n++] = &groups[g];
			}
	}
	if (b.n && !stop) {
		int r = send_batch(&b, size, gap_ns, &due);

		if (r < 0)
			return 1;
		sent += (unsigned)r;
	}
	printf("streamgen: sent %llu datagrams: %d source(s) x %d group(s) x %llu sequence numbers "
	       "(%llu skipped: %llu per stream), %llu B each\n", (unsigned long long)sent, ns, ng,
	       (unsigned long long)(count - skipped), (unsigned long long)skipped,
	       (unsigned long long)skipped, size);
	free(b.buf);
	return stop ? 1 : 0;
}
