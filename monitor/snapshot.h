/* SPDX-License-Identifier: BSD-2-Clause */
/* One reading of the BPF maps (or of a test's made-up data): what
 * report.c turns into an interval's output. Plain data, no kernel needed. */
#ifndef MONITOR_SNAPSHOT_H
#define MONITOR_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "rdmamon.h"

struct rm_objrow { struct rm_obj_key k; struct rm_obj o; };
struct rm_countrow { struct rm_count_key k; struct rm_count_val v; };
struct rm_callrow { struct rm_op_key k; uint64_t n; };
struct rm_devname { uint32_t index; char name[RM_DEVNAME_LEN]; };

struct rm_snapshot {
	uint64_t mono_ns;          /* CLOCK_MONOTONIC at the reading */
	uint64_t real_ns;          /* CLOCK_REALTIME, for the timestamp printed */
	struct rm_objrow *objs;    /* live objects */
	size_t nobjs;
	struct rm_countrow *counts;
	size_t ncounts;
	struct rm_callrow *calls;
	size_t ncalls;
	struct rm_devname *devs;
	size_t ndevs;
	uint64_t lost[LOST_NSLOTS];
	uint64_t events[EV_NKINDS]; /* events read from the ring buffer since start */
};

/* Append helpers (grow the arrays); -1 on no memory. */
int rm_snap_add_obj(struct rm_snapshot *s, const struct rm_obj_key *k, const struct rm_obj *o);
int rm_snap_add_count(struct rm_snapshot *s, const struct rm_count_key *k,
		      const struct rm_count_val *v);
int rm_snap_add_call(struct rm_snapshot *s, const struct rm_op_key *k, uint64_t n);
int rm_snap_add_dev(struct rm_snapshot *s, uint32_t index, const char *name);
void rm_snap_clear(struct rm_snapshot *s);   /* frees the arrays, zeroes all */
/* The name of device idx, or "devIDX" in buf when the snapshot has none. */
const char *rm_snap_dev_name(const struct rm_snapshot *s, uint32_t idx, char *buf, size_t len);

#endif
