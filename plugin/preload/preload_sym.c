/* SPDX-License-Identifier: BSD-2-Clause */
/* LD_PRELOAD mode: the interposed libibverbs symbols, exported under
 * libibverbs' own version nodes (preload.map: a symbol in another node is
 * silently not interposed), the real ones found with dlvsym, and the
 * start-up and exit self-checks.
 *
 *   LD_PRELOAD=libwrtrace.so WRTRACE_OUT=FILE[:max=N][:fifo=N][:nodefer][:quiet][:nohwts] PROGRAM ...
 *
 * Inert when the library is dlopen'ed as a plugin (--plugin): then the
 * program's ibv_open_device does not resolve to ours. libibverbs is not a
 * dependency of the library (a preload into /bin/true must not load it);
 * the real functions are looked up on first use. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "preload.h"

#define V11 "IBVERBS_1.1"
#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool preloaded;      /* our ibv_open_device is the one programs call */

/* REAL(name, version): real_name, the next definition after ours (cached). */
#define REAL(name, ver)                                                               \
	static __typeof__(&name) real_##name;                                         \
	if (!real_##name)                                                             \
		real_##name = (__typeof__(&name))dlvsym(RTLD_NEXT, #name, ver);                    \
	if (!real_##name) {                                                           \
		fprintf(stderr, "wrtrace: %s@%s not found (libibverbs not loaded?)\n", \
			#name, ver);                                                  \
		errno = ENOSYS;                                                       \
	}

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
	struct ibv_context *ctx;

	REAL(ibv_open_device, V11);
	if (!real_ibv_open_device)
		return NULL;
	ctx = real_ibv_open_device(dev);
	if (ctx && wrp.active) {
		pthread_mutex_lock(&lock);
		wrp_attach_context(ctx);
		pthread_mutex_unlock(&lock);
	}
	return ctx;
}

EXPORT int ibv_close_device(struct ibv_context *ctx)
{
	REAL(ibv_close_device, V11);
	if (!real_ibv_close_device)
		return ENOSYS;
	if (wrp.active) {
		pthread_mutex_lock(&lock);
		wrp_detach_context(ctx); /* ends the run it holds: trace written now */
		pthread_mutex_unlock(&lock);
	}
	return real_ibv_close_device(ctx);
}

/* Upgraded to an ex-CQ with CQE stamps where the device has them (preload_cq.c). */
EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *ch, int vec)
{
	REAL(ibv_create_cq, V11);
	if (!real_ibv_create_cq)
		return NULL;
	if (!wrp.active)
		return real_ibv_create_cq(ctx, cqe, cq_context, ch, vec);
	return wrp_create_cq(ctx, cqe, cq_context, ch, vec, real_ibv_create_cq);
}

EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	REAL(ibv_destroy_cq, V11);
	if (!real_ibv_destroy_cq)
		return ENOSYS;
	if (!wrp.active)
		return real_ibv_destroy_cq(cq);
	return wrp_destroy_cq(cq, real_ibv_destroy_cq);
}

EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	struct ibv_qp *qp;

	REAL(ibv_create_qp, V11);
	if (!real_ibv_create_qp)
		return NULL;
	qp = real_ibv_create_qp(pd, a);
	if (qp && wrp.active) {
		pthread_mutex_lock(&lock);
		wrp_register_qp(qp, a->qp_type, a->sq_sig_all, a->cap.max_send_wr, a->cap.max_recv_wr);
		pthread_mutex_unlock(&lock);
	}
	return qp;
}

EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct ibv_qp_ex *qpx;

	REAL(ibv_qp_to_qp_ex, "IBVERBS_1.6");
	if (!real_ibv_qp_to_qp_ex)
		return NULL;
	qpx = real_ibv_qp_to_qp_ex(qp);
	if (qpx && wrp.active) {
		struct wrp_slot *s;

		pthread_mutex_lock(&lock);
		/* a QP we did not see created (mlx5dv_create_qp): follow it now */
		s = wrp_register_qp(qp, qp->qp_type, 0, 0, 0);
		if (s)
			wrp_wrap_qpx(s, qpx);
		pthread_mutex_unlock(&lock);
	}
	return qpx;
}

EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	int rc;

	REAL(ibv_modify_qp, V11);
	if (!real_ibv_modify_qp)
		return ENOSYS;
	rc = real_ibv_modify_qp(qp, attr, mask);
	if (rc == 0 && wrp.active) {
		pthread_mutex_lock(&lock);
		/* mlx5 resets wr_complete on every move to RTS or RESET */
		for (uint32_t i = 0; i < wrp.nslots; i++)
			if (wrp.slots[i].qp == qp && wrp.slots[i].qpx)
				wrp_wrap_qpx(&wrp.slots[i], wrp.slots[i].qpx);
		pthread_mutex_unlock(&lock);
	}
	return rc;
}

EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	REAL(ibv_destroy_qp, V11);
	if (!real_ibv_destroy_qp)
		return ENOSYS;
	if (wrp.active) {
		pthread_mutex_lock(&lock);
		for (uint32_t i = 0; i < wrp.nslots; i++)
			if (wrp.slots[i].qp == qp)
				wrp.slots[i].qp = NULL; /* its index stays taken for this process */
		pthread_mutex_unlock(&lock);
	}
	return real_ibv_destroy_qp(qp);
}

/* True when the name programs resolve is defined in this very library. */
static bool resolves_to_us(const char *name, Dl_info *where)
{
	Dl_info self;
	void *sym = dlsym(RTLD_DEFAULT, name);

	memset(where, 0, sizeof(*where));
	if (!sym || !dladdr(sym, where) || !dladdr((void *)resolves_to_us, &self))
		return false;
	return where->dli_fbase == self.dli_fbase;
}

static bool named_in_ld_preload(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "wrtrace");
}

__attribute__((constructor)) static void wrp_init(void)
{
	const char *out = getenv(WRP_ENV_OUT);
	Dl_info where;

	preloaded = resolves_to_us("ibv_open_device", &where);
	if (!preloaded) {
		/* dlopen'ed as a plugin: quiet; preloaded but shadowed: say so */
		if (named_in_ld_preload())
			fprintf(stderr, "wrtrace: LD_PRELOAD active but ibv_open_device resolves to %s, "
				"not to libwrtrace: nothing will be traced (put libwrtrace first in LD_PRELOAD)\n",
				where.dli_fname ? where.dli_fname : "nothing");
		return;
	}
	if (!out || !*out) {
		fprintf(stderr, "wrtrace: LD_PRELOAD active but %s is not set: nothing will be traced\n",
			WRP_ENV_OUT);
		return;
	}
	wrp_setup(out);
}

/* Whether the program had libibverbs at all (a preload into /bin/true
 * has nothing to report). */
static bool verbs_loaded(void)
{
	void *h = dlopen("libibverbs.so.1", RTLD_LAZY | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h != NULL;
}

__attribute__((destructor)) static void wrp_exit(void)
{
	if (!wrp.active)
		return;
	pthread_mutex_lock(&lock);
	if (!wrp.opened && verbs_loaded())
		fprintf(stderr, "wrtrace: LD_PRELOAD active but no verbs device was opened through it: "
			"nothing traced\n");
	else if (wrp.opened && !wrp.nslots)
		fprintf(stderr, "wrtrace: a verbs device was opened but no QP was created through "
			"it: nothing traced\n");
	wrp_teardown();
	pthread_mutex_unlock(&lock);
}
