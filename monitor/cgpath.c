// SPDX-License-Identifier: BSD-2-Clause
#include "cgpath.h"

#include <fts.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct cg_entry {
	uint64_t id;
	char *path;
};

struct rm_cgpaths {
	char *root;
	struct cg_entry *v;
	size_t n, cap;
};

struct rm_cgpaths *rm_cgpaths_new(const char *root)
{
	struct rm_cgpaths *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->root = strdup(root);
	if (!c->root) {
		free(c);
		return NULL;
	}
	return c;
}

static void clear(struct rm_cgpaths *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	c->n = 0;
}

void rm_cgpaths_free(struct rm_cgpaths *c)
{
	if (!c)
		return;
	clear(c);
	free(c->v);
	free(c->root);
	free(c);
}

static int add(struct rm_cgpaths *c, uint64_t id, const char *rel)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct cg_entry *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -1;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n].id = id;
	c->v[c->n].path = strdup(*rel ? rel : "/");
	if (!c->v[c->n].path)
		return -1;
	c->n++;
	return 0;
}

int rm_cgpaths_scan(struct rm_cgpaths *c)
{
	char *roots[] = { c->root, NULL };
	size_t rootlen = strlen(c->root);
	FTS *fts;
	FTSENT *e;

	while (rootlen > 1 && c->root[rootlen - 1] == '/')
		rootlen--;
	clear(c);
	fts = fts_open(roots, FTS_PHYSICAL | FTS_NOCHDIR | FTS_XDEV, NULL);
	if (!fts)
		return -1;
	while ((e = fts_read(fts))) {
		if (e->fts_level == 0 && (e->fts_info == FTS_DNR || e->fts_info == FTS_NS ||
					   e->fts_info == FTS_ERR)) {
			fts_close(fts);
			return -1;
		}
		if (e->fts_info != FTS_D)
			continue;
		if (add(c, (uint64_t)e->fts_statp->st_ino, e->fts_path + rootlen)) {
			fts_close(fts);
			return -1;
		}
	}
	fts_close(fts);
	return (int)c->n;
}

static const char *find(const struct rm_cgpaths *c, uint64_t id)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].id == id)
			return c->v[i].path;
	return NULL;
}

const char *rm_cgpath(struct rm_cgpaths *c, uint64_t id)
{
	const char *p = find(c, id);

	if (p)
		return p;
	rm_cgpaths_scan(c);
	return find(c, id);
}

uint64_t rm_cgid_of(struct rm_cgpaths *c, const char *path)
{
	char full[4096];
	struct stat st;

	while (*path == '/')
		path++;
	if ((size_t)snprintf(full, sizeof(full), "%s/%s", c->root, path) >= sizeof(full))
		return 0;
	if (stat(full, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	return (uint64_t)st.st_ino;
}
