// SPDX-License-Identifier: BSD-2-Clause
#include "snapshot.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* grow(&array, &count, element size): room for one more; NULL on no memory */
static void *grow(void *arrp, size_t *n, size_t size)
{
	void **arr = arrp;
	void *p = realloc(*arr, (*n + 1) * size);

	if (!p)
		return NULL;
	*arr = p;
	return (char *)p + (*n)++ * size;
}

int rm_snap_add_obj(struct rm_snapshot *s, const struct rm_obj_key *k, const struct rm_obj *o)
{
	struct rm_objrow *r = grow(&s->objs, &s->nobjs, sizeof(*r));

	if (!r)
		return -1;
	r->k = *k;
	r->o = *o;
	return 0;
}

int rm_snap_add_count(struct rm_snapshot *s, const struct rm_count_key *k,
		      const struct rm_count_val *v)
{
	struct rm_countrow *r = grow(&s->counts, &s->ncounts, sizeof(*r));

	if (!r)
		return -1;
	r->k = *k;
	r->v = *v;
	return 0;
}

int rm_snap_add_call(struct rm_snapshot *s, const struct rm_op_key *k, uint64_t n)
{
	struct rm_callrow *r = grow(&s->calls, &s->ncalls, sizeof(*r));

	if (!r)
		return -1;
	r->k = *k;
	r->n = n;
	return 0;
}

int rm_snap_add_dev(struct rm_snapshot *s, uint32_t index, const char *name)
{
	struct rm_devname *r = grow(&s->devs, &s->ndevs, sizeof(*r));

	if (!r)
		return -1;
	r->index = index;
	memset(r->name, 0, sizeof(r->name));
	strncpy(r->name, name, sizeof(r->name) - 1);
	return 0;
}

void rm_snap_clear(struct rm_snapshot *s)
{
	free(s->objs);
	free(s->counts);
	free(s->calls);
	free(s->devs);
	memset(s, 0, sizeof(*s));
}

const char *rm_snap_dev_name(const struct rm_snapshot *s, uint32_t idx, char *buf, size_t len)
{
	for (size_t i = 0; i < s->ndevs; i++)
		if (s->devs[i].index == idx)
			return s->devs[i].name;
	snprintf(buf, len, "dev%" PRIu32, idx);
	return buf;
}
