/* SPDX-License-Identifier: BSD-2-Clause */
/* cgroup v2 id -> path. A cgroup's id (bpf_get_current_cgroup_id) is the
 * inode number of its directory (docs: README.md, monitor section), so the
 * path is found by walking the cgroup2 mount; results are cached and the
 * walk redone when an id is not known yet (a cgroup created since). */
#ifndef MONITOR_CGPATH_H
#define MONITOR_CGPATH_H

#include <stddef.h>
#include <stdint.h>

struct rm_cgpaths;

/* root: the cgroup2 mount (/sys/fs/cgroup). NULL on no memory. */
struct rm_cgpaths *rm_cgpaths_new(const char *root);
void rm_cgpaths_free(struct rm_cgpaths *c);
/* "/" for the root, "/a/b" below it; NULL when no directory has this id
 * (a removed cgroup). The string lives until the next rescan. */
const char *rm_cgpath(struct rm_cgpaths *c, uint64_t id);
/* The id of a path below the root ("/a/b" or "a/b"), 0 when absent. */
uint64_t rm_cgid_of(struct rm_cgpaths *c, const char *path);
/* Number of cgroups found by the last walk; -1 when the root is unreadable. */
int rm_cgpaths_scan(struct rm_cgpaths *c);

#endif
