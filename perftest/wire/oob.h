/* SPDX-License-Identifier: BSD-2-Clause */
/* Out-of-band TCP channel (docs/wire-protocol.md §1-8): one connection,
 * symmetric fixed-size exchanges, client writes first. Unlike upstream,
 * every wait is bounded and short reads/writes are completed. */
#ifndef PT_OOB_H
#define PT_OOB_H
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "wire.h"
#include "negotiate.h"

#define PT_OOB_DEF_TIMEOUT_MS 60000

/* A message transport in place of the TCP socket (rdma_cm, -z; cm.c): each
 * direction of an exchange is one message of exactly n bytes. deadline is
 * in pt_now_ns() time, 0 for none. 0 or -errno, with the reason in why. */
struct pt_oob_msg_ops {
	int (*send)(void *t, const void *buf, size_t n, uint64_t deadline, char *why, size_t len);
	int (*recv)(void *t, void *buf, size_t n, uint64_t deadline, char *why, size_t len);
	void (*close)(void *t);
	/* 1 once the peer has disconnected; never blocks, consumes no message */
	int (*peer_gone)(void *t);
};

/* Errors are negative errno values: -ETIMEDOUT (peer silent), -ECONNRESET
 * (peer closed or reset), -EPROTO (malformed or incompatible message),
 * -EINVAL (bad argument), or the failing syscall's -errno. The text is in
 * pt_oob_strerror(). */
struct pt_oob {
	int fd;                 /* connected socket, -1 if none */
	int lfd;                /* listening socket (server), -1 if none */
	int is_server;          /* OOB role: reads first in each exchange */
	int write_first;        /* TCP: write first even as the server (a UD sender
	                         * after its run: its message tells the receiving
	                         * client it has finished, run_bw.c sender_done) */
	int timeout_ms;         /* per exchange (each direction); < 0: none */
	int connect_timeout_ms; /* accept wait / connect retry deadline */
	const char *version;    /* announced string; WIRE_VERSION by default */
	struct pt_peer_rules peer; /* valid after pt_oob_xchg_versions */
	const struct pt_oob_msg_ops *msg; /* set: messages go there, not to fd */
	void *msg_ctx;
	int raw_keys;           /* key messages as raw structs (rdma_cm modes) */
	int data_validation;    /* --data_validation: 6.29's longer keys (peer.key_dv_629) */
	const char *source;     /* client: numeric address to bind before connecting */
	char err[256];
};

void pt_oob_init(struct pt_oob *c);
/* Both timeouts at once (milliseconds, < 0 for none). */
void pt_oob_set_timeout(struct pt_oob *c, int ms);
/* TCP keepalive probes after idle_s seconds of silence: a wait with no
 * timeout still ends when the peer's host goes away. */
int pt_oob_keepalive(struct pt_oob *c, int idle_s);
/* Announce another version (tests fake old/new peers with this). */
void pt_oob_set_version(struct pt_oob *c, const char *version);
const char *pt_oob_strerror(const struct pt_oob *c);
/* Every wait ends with -EINTR once *flag is non-zero (a signal handler sets
 * it): SIGINT stops a tool blocked on its peer. NULL: signals are ignored. */
void pt_oob_set_stop_flag(const volatile sig_atomic_t *flag);

/* Server: bind (host NULL = any address; port 0 = ephemeral) and listen.
 * family is AF_INET, AF_INET6 or AF_UNSPEC. */
int pt_oob_listen(struct pt_oob *c, const char *host, int port, int family);
/* Port the listener is bound to (after pt_oob_listen), or -1. */
int pt_oob_listen_port(const struct pt_oob *c);
/* Wait up to connect_timeout_ms for one client, then close the listener. */
int pt_oob_accept(struct pt_oob *c);
/* Client: connect, retrying refused connections every 100 ms until
 * connect_timeout_ms has passed (the server may not be listening yet).
 * With c->source set (pt_oob_set_source) the socket is bound to that
 * address first and only the server's addresses of its family are tried. */
int pt_oob_connect(struct pt_oob *c, const char *host, int port, int family);
void pt_oob_close(struct pt_oob *c);
/* --bind_source_ip: the numeric IPv4/IPv6 address a client binds to (kept
 * by pointer; NULL: the kernel chooses). */
void pt_oob_set_source(struct pt_oob *c, const char *ip);
/* Carry the messages over ops/t from now on (t is closed by pt_oob_close);
 * raw_keys: keys travel as raw structs (docs/wire-protocol.md §9.2). */
void pt_oob_use_msg(struct pt_oob *c, const struct pt_oob_msg_ops *ops, void *t,
		    int is_server, int raw_keys);

/* Send our n bytes and receive the peer's n, in role order. what names the
 * message in error texts ("version", "key message", ...). */
int pt_oob_exchange(struct pt_oob *c, const void *mine, void *theirs,
		    size_t n, const char *what);

/* V: exchange versions and fill c->peer; refuses incompatible peers with
 * -EPROTO. dont_xchg: send nothing, assume a modern compatible peer. */
int pt_oob_xchg_versions(struct pt_oob *c, int dont_xchg);
/* S1/S2 (only if c->peer.sysdata): in: local values, out: max of both. */
int pt_oob_xchg_sysdata(struct pt_oob *c, int32_t *page_size,
			int32_t *cache_line);
/* M (only if c->peer.mtu_xchg): in: local ibv_mtu enum, out: min. */
int pt_oob_xchg_mtu(struct pt_oob *c, int *mtu);
/* K: one key message, 108-byte GID form if use_gid else 59 bytes; with
 * raw_keys the peer's raw struct (56 or 64 bytes, peer.cm_key_size). */
int pt_oob_xchg_key(struct pt_oob *c, int use_gid, const struct pt_key *mine,
		    struct pt_key *theirs);
/* K0: a key exchange used as a barrier; the peer's content is dropped,
 * after a parse in the TCP text form (where a malformed one means a
 * desynchronised stream), unread as a raw struct (-z/-R: the message
 * transport checks the size). mine may be NULL (an all-zero key is sent). */
int pt_oob_barrier(struct pt_oob *c, int use_gid, const struct pt_key *mine);
/* N (6.28+ peers, only if c->peer.negotiate): our block in its 320-byte
 * form; a TCP server answers a 312-byte block (a build without mlx5dv) in
 * kind. The peer's block is parsed strictly, not compared. */
int pt_oob_xchg_negotiate(struct pt_oob *c, const struct pt_negotiate *mine,
			  struct pt_negotiate *theirs);
/* R: five exchanges (size, iters, peak, avg, msg rate); a peer's figures
 * that pt_bw_report_check() refuses give -EPROTO. theirs NULL: the peer's
 * bytes are read and dropped unchecked, for the end of a non-duplex
 * write/read/atomic run, where upstream's server sends a report it never
 * filled and its client ignores it (docs/wire-protocol.md §8). With
 * mine->per_port (--report-per-port) four per-port exchanges follow. */
int pt_oob_xchg_bw_report(struct pt_oob *c, const struct pt_bw_report *mine,
			  struct pt_bw_report *theirs);

#endif
