/* SPDX-License-Identifier: BSD-2-Clause */
/* rdma_cm addressing (docs/wire-protocol.md §9): --bind_source_ip and
 * --ipv6-addr with -z/-R. The source is parsed and its family decides the
 * server addresses asked for; a bad one is refused before any rdma_cm call;
 * the listener's wildcard follows --ipv6-addr. No RDMA device needed. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>
#include "perftest/wire/cm.h"

static void test_any_addr(void **state)
{
	struct sockaddr_storage ss;
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&ss;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&ss;
	(void)state;

	memset(&ss, 0xaa, sizeof(ss));
	pt_cm_any_addr(&ss, AF_UNSPEC, 18515);   /* no --ipv6-addr: IPv4, as before */
	assert_int_equal(a4->sin_family, AF_INET);
	assert_int_equal(ntohs(a4->sin_port), 18515);
	assert_int_equal(a4->sin_addr.s_addr, htonl(INADDR_ANY));
	memset(&ss, 0xaa, sizeof(ss));
	pt_cm_any_addr(&ss, AF_INET6, 7000);
	assert_int_equal(a6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(a6->sin6_port), 7000);
	assert_memory_equal(&a6->sin6_addr, &in6addr_any, sizeof(in6addr_any));
}

static void test_bad_source_refused(void **state)
{
	struct sockaddr_storage src;
	struct rdma_addrinfo *res = NULL;
	char why[256] = "";
	(void)state;

	assert_int_equal(pt_cm_getaddr("10.0.0.1", 18515, RDMA_PS_TCP, AF_UNSPEC, "not-an-ip",
				       &src, &res, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "invalid source address 'not-an-ip'"));
	assert_null(res);
	/* --ipv6-addr with an IPv4 source: the family cannot match */
	assert_int_equal(pt_cm_getaddr("::1", 18515, RDMA_PS_TCP, AF_INET6, "10.0.0.1",
				       &src, &res, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "--ipv6-addr: IPv6 only"));
	assert_int_equal(pt_cm_getaddr("10.0.0.1", 70000, RDMA_PS_TCP, AF_UNSPEC, NULL,
				       &src, &res, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "invalid port 70000"));
}

static void test_source_parsed(void **state)
{
	struct sockaddr_storage src;
	struct rdma_addrinfo *res = NULL;
	char why[256] = "";
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&src;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&src;
	int r;
	(void)state;

	/* the source is filled in before the server is looked up, whatever
	 * rdma_getaddrinfo then says on a host without RDMA devices */
	r = pt_cm_getaddr("127.0.0.1", 18515, RDMA_PS_TCP, AF_UNSPEC, "192.0.2.7", &src, &res,
			  why, sizeof(why));
	assert_int_equal(a4->sin_family, AF_INET);
	assert_int_equal(a4->sin_addr.s_addr, inet_addr("192.0.2.7"));
	if (!r) {
		assert_non_null(res);
		assert_int_equal(res->ai_dst_addr->sa_family, AF_INET);
		rdma_freeaddrinfo(res);
	} else {
		assert_non_null(strstr(why, "(IPv4)"));   /* asked for the source's family */
	}
	res = NULL;
	r = pt_cm_getaddr("::1", 18515, RDMA_PS_TCP, AF_INET6, "2001:db8::5", &src, &res,
			  why, sizeof(why));
	assert_int_equal(a6->sin6_family, AF_INET6);
	assert_int_equal(a6->sin6_addr.s6_addr[15], 5);
	if (!r)
		rdma_freeaddrinfo(res);
	else
		assert_non_null(strstr(why, "(IPv6)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_any_addr),
		cmocka_unit_test(test_bad_source_refused),
		cmocka_unit_test(test_source_parsed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
