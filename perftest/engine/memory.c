/* SPDX-License-Identifier: BSD-2-Clause */
/* Issue 18, memory group: where the work buffer comes from (heap, huge
 * pages, a mapped file), how it is registered (one MR, one per QP, ODP,
 * a null MR for local SGEs) and what it holds (a payload file's pattern,
 * the data-validation pattern and its check at the end of a run). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/err.h"
#include "engine.h"
#include "memory.h"

#define HUGE_PAGE_DEFAULT (2u << 20)

/* The huge page size from /proc/meminfo ("Hugepagesize: 2048 kB"), and
 * the free/total counts for an error message; 2 MiB when unreadable. */
static size_t huge_page_info(long *free_pages, long *total_pages)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long kb = 0;

	*free_pages = *total_pages = -1;
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "Hugepagesize: %ld kB", &kb);
		sscanf(line, "HugePages_Free: %ld", free_pages);
		sscanf(line, "HugePages_Total: %ld", total_pages);
	}
	if (f)
		fclose(f);
	return kb > 0 ? (size_t)kb * 1024 : HUGE_PAGE_DEFAULT;
}

static int alloc_huge(struct pt_res *r)
{
	long free_pages, total_pages;
	size_t hp = huge_page_info(&free_pages, &total_pages);
	size_t len = (r->buf_len + hp - 1) / hp * hp;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);

	if (m == MAP_FAILED) {
		int e = errno;

		fprintf(stderr, " --use_hugepages: couldn't map %zu bytes of %zu kB huge pages: %s"
			" (HugePages_Free %ld of HugePages_Total %ld; reserve them in"
			" /proc/sys/vm/nr_hugepages)\n", len, hp / 1024, strerror(e), free_pages,
			total_pages);
		return -1;
	}
	r->buf = m;
	r->map_len = len;
	return 0;
}

static int alloc_mmap(struct pt_res *r, const struct pt_mem_params *m)
{
	int fd = open(m->mmap_file, O_RDWR);
	struct stat st;
	void *p;

	if (fd < 0) {
		fprintf(stderr, " --mmap: couldn't open %s: %s\n", m->mmap_file, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || (uint64_t)st.st_size < m->mmap_offset + r->buf_len) {
		fprintf(stderr, " --mmap: %s is %lld bytes; the buffers need %zu from offset %llu\n",
			m->mmap_file, (long long)st.st_size, r->buf_len,
			(unsigned long long)m->mmap_offset);
		close(fd);
		return -1;
	}
	p = mmap(NULL, r->buf_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)m->mmap_offset);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, " --mmap: couldn't map %zu bytes of %s at offset %llu: %s\n",
			r->buf_len, m->mmap_file, (unsigned long long)m->mmap_offset, strerror(errno));
		return -1;
	}
	r->buf = p;
	r->map_len = r->buf_len;
	return 0;
}

int pt_mem_alloc(struct pt_res *r, const struct pt_mem_params *m, size_t page)
{
	if (m->use_hugepages)
		return alloc_huge(r);
	if (*m->mmap_file)
		return alloc_mmap(r, m);
	r->buf = aligned_alloc(page, r->buf_len);
	if (!r->buf) {
		fprintf(stderr, " Couldn't allocate %zu bytes of work buffer\n", r->buf_len);
		return -1;
	}
	/* not touched here: the caller binds the pages to a NUMA node first,
	 * then zeroes fresh memory (map_len 0) */
	return 0;
}

void pt_mem_free(struct pt_res *r)
{
	if (r->map_len)
		munmap(r->buf, r->map_len);
	else
		free(r->buf);
	r->buf = NULL;
	r->map_len = 0;
}

void pt_mem_layout(const struct pt_res *r, bool mr_per_qp, int i, uint8_t **send, uint8_t **recv)
{
	/* one MR per QP covers its two regions, so they sit side by side */
	size_t s = mr_per_qp ? 2 * (size_t)i : (size_t)i;
	size_t v = mr_per_qp ? s + 1 : (size_t)(r->num_qps + i);

	*send = r->buf + s * r->region;
	*recv = r->buf + v * r->region;
}

static const char *verb_word(enum pt_verb v)
{
	return v == PT_VERB_SEND ? "SEND" : v == PT_VERB_WRITE ? "WRITE" :
	       v == PT_VERB_READ ? "READ" : "ATOMIC";
}

/* What the tool's verb needs of a transport's ODP caps. */
static uint32_t odp_needed(const struct pt_params *p)
{
	switch (p->tool->verb) {
	case PT_VERB_SEND: return IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV;
	case PT_VERB_WRITE:
		return IBV_ODP_SUPPORT_WRITE | (p->traffic.with_imm ? IBV_ODP_SUPPORT_RECV : 0);
	case PT_VERB_READ: return IBV_ODP_SUPPORT_READ;
	case PT_VERB_ATOMIC: return IBV_ODP_SUPPORT_ATOMIC;
	}
	return 0;
}

int pt_odp_check(const struct ibv_odp_caps *caps, const struct pt_params *p, char *why, size_t len)
{
	const char *tr = p->conn.type == PT_CONN_UD ? "UD" : p->conn.type == PT_CONN_UC ? "UC" : "RC";
	uint32_t have = p->conn.type == PT_CONN_UD ? caps->per_transport_caps.ud_odp_caps :
			p->conn.type == PT_CONN_UC ? caps->per_transport_caps.uc_odp_caps :
			caps->per_transport_caps.rc_odp_caps;
	uint32_t need = odp_needed(p);

	if (!(caps->general_caps & IBV_ODP_SUPPORT)) {
		snprintf(why, len, "no On-Demand Paging (ibv_query_device_ex: odp_caps.general_caps"
			 " 0x%llx lacks IBV_ODP_SUPPORT)", (unsigned long long)caps->general_caps);
		return -1;
	}
	if ((have & need) != need) {
		snprintf(why, len, "no On-Demand Paging for %s %s (ibv_query_device_ex: %s odp caps"
			 " 0x%x, needed 0x%x)", tr, verb_word(p->tool->verb), tr, have, need);
		return -1;
	}
	return 0;
}

int pt_mem_access(const struct pt_params *p)
{
	/* Relaxed ordering is an optional flag: devices without it ignore it;
	 * --disable_pcie_relaxed leaves it out. */
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC | (p->addr.no_relaxed ? 0 : IBV_ACCESS_RELAXED_ORDERING);

	return access | (p->mem.odp ? IBV_ACCESS_ON_DEMAND : 0);
}

static struct ibv_mr *reg(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len, access);

	if (!mr)
		fprintf(stderr, " Couldn't register MR of %zu bytes%s: %s\n", len,
			(access & IBV_ACCESS_ON_DEMAND) ? " (ODP)" : "", strerror(errno));
	return mr;
}

int pt_mem_register(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	struct pt_res *r = &c->res;
	int access = pt_mem_access(p);

	if (!p->mem.mr_per_qp) {
		r->mr = reg(r->pd, r->buf, r->buf_len, access);
		if (!r->mr)
			return -1;
	} else {
		r->qp_mrs = calloc((size_t)r->num_qps, sizeof(*r->qp_mrs));
		if (!r->qp_mrs)
			return -1;
		for (int i = 0; i < r->num_qps; i++) {
			r->qp_mrs[i] = reg(r->pd, r->buf + 2 * (size_t)i * r->region, 2 * r->region,
					   access);
			if (!r->qp_mrs[i])
				return -1;
		}
		r->mr = r->qp_mrs[0];   /* what code without a QP at hand uses */
	}
	if (p->mem.null_mr) {
		r->null_mr = ibv_alloc_null_mr(r->pd);
		if (!r->null_mr) {
			int e = errno;

			fprintf(stderr, " --use-null-mr: device %s has no null MR (ibv_alloc_null_mr:"
				" %s, errno %d)\n", c->dev.devname, strerror(e), e);
			return -1;
		}
	}
	return 0;
}

void pt_mem_deregister(struct pt_res *r)
{
	if (r->null_mr)
		ibv_dereg_mr(r->null_mr);
	if (r->qp_mrs) {
		for (int i = 0; i < r->num_qps; i++)
			if (r->qp_mrs[i])
				ibv_dereg_mr(r->qp_mrs[i]);
		free(r->qp_mrs);
	} else if (r->mr) {
		ibv_dereg_mr(r->mr);
	}
	r->null_mr = NULL;
	r->qp_mrs = NULL;
	r->mr = NULL;
}
