/* SPDX-License-Identifier: BSD-2-Clause */
/* MGID text parsing. Upstream only knew the 16-token form and crashed on
 * anything else (docs/upstream-behaviour.md §4.3); we accept three forms and reject the
 * rest with a message.
 *
 * Dotted IPv4 maps to the IPv4-mapped address ::ffff:a.b.c.d, which is what
 * the kernel uses for RoCE v2 and what matches IPv4 port GIDs (upstream
 * aborts when one side's GID is IPv4-mapped and the other is not). On a
 * native IB fabric the IPoIB-style mapping ff12:401b:ffff::a.b.c.d (low 28
 * bits of the group) would be the natural one; we do not use it because
 * dotted input is meant for RoCE. Pass an explicit ff1x:: MGID for IB. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "mgid.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static bool is_dec(char c) { return c >= '0' && c <= '9'; }

static int hexval(char c)
{
	if (is_dec(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One byte token of [s, e): decimal without leading zeros ("0" itself is
 * fine) or 0x-hex. Upstream used strtoll(base 0), so "010" meant 8 there;
 * we refuse it rather than guess. Returns the value or -1 with err set. */
static int parse_byte_token(const char *s, const char *e, int index,
			    char *err, size_t errlen)
{
	int len = (int)(e - s);
	long v = 0;

	if (len == 0)
		return fail(err, errlen, "empty byte %d", index + 1);
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (const char *p = s + 2; p < e; p++) {
			int h = hexval(*p);

			if (h < 0)
				return fail(err, errlen, "byte %d '%.*s' is not a number",
					    index + 1, len, s);
			v = v * 16 + h;
			if (v > 255)
				return fail(err, errlen, "byte %d '%.*s' is greater than 255",
					    index + 1, len, s);
		}
		return (int)v;
	}
	for (const char *p = s; p < e; p++) {
		if (!is_dec(*p))
			return fail(err, errlen, "byte %d '%.*s' is not a number",
				    index + 1, len, s);
		v = v * 10 + (*p - '0');
		if (v > 255)
			return fail(err, errlen, "byte %d '%.*s' is greater than 255",
				    index + 1, len, s);
	}
	if (len > 1 && s[0] == '0')
		return fail(err, errlen,
			    "byte %d '%.*s' has a leading zero (use decimal or 0x-hex)",
			    index + 1, len, s);
	return (int)v;
}

/* Split on sep into at most max tokens and parse each as a byte.
 * Returns the number of tokens, or -1 with err set. */
static int parse_bytes(const char *text, char sep, uint8_t *out, int max,
		       char *err, size_t errlen)
{
	const char *s = text;
	int n = 0;

	for (;;) {
		const char *e = strchr(s, sep);
		int v;

		if (!e)
			e = s + strlen(s);
		if (n == max)
			return fail(err, errlen, "more than %d %s", max,
				    sep == '.' ? "dotted numbers" : "colon-separated bytes");
		v = parse_byte_token(s, e, n, err, errlen);
		if (v < 0)
			return -1;
		out[n++] = (uint8_t)v;
		if (*e == '\0')
			return n;
		s = e + 1;
	}
}

static bool is_ipv4_mcast(uint8_t first) { return first >= 224 && first <= 239; }

static bool is_v4mapped(const uint8_t g[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(g, prefix, sizeof(prefix)) == 0;
}

bool pt_mgid_ipv4(const uint8_t mgid[16], struct in_addr *group)
{
	static const uint8_t roce_v1[12] = { 0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (!is_v4mapped(mgid) && memcmp(mgid, roce_v1, sizeof(roce_v1)) != 0)
		return false;
	if (group)
		memcpy(&group->s_addr, mgid + 12, 4);
	return true;
}

/* Every form must end up as a group address a switch or rxe can use. */
static int check_multicast(const uint8_t g[16], char *err, size_t errlen)
{
	if (g[0] == 0xff)
		return 0;
	if (is_v4mapped(g)) {
		if (is_ipv4_mcast(g[12]))
			return 0;
		return fail(err, errlen,
			    "maps to IPv4 %u.%u.%u.%u, which is not multicast (224.0.0.0/4)",
			    g[12], g[13], g[14], g[15]);
	}
	return fail(err, errlen, "not a multicast GID (ff00::/8 or ::ffff:224.0.0.0/100)");
}

static int parse_dotted(const char *text, uint8_t mgid[16], char *err, size_t errlen)
{
	uint8_t v4[4];
	int n = parse_bytes(text, '.', v4, 4, err, errlen);

	if (n < 0)
		return -1;
	if (n != 4)
		return fail(err, errlen, "an IPv4 group needs 4 dotted numbers, got %d", n);
	if (!is_ipv4_mcast(v4[0]))
		return fail(err, errlen, "not an IPv4 multicast address (224.0.0.0/4)");
	memset(mgid, 0, 10);
	mgid[10] = mgid[11] = 0xff;
	memcpy(mgid + 12, v4, 4);
	return 0;
}

static int parse_tokens(const char *text, uint8_t mgid[16], char *err, size_t errlen)
{
	uint8_t g[16];
	int n = parse_bytes(text, ':', g, 16, err, errlen);

	if (n < 0)
		return -1;
	if (n != 16)
		return fail(err, errlen, "expected 16 colon-separated bytes, got %d", n);
	if (check_multicast(g, err, errlen))
		return -1;
	memcpy(mgid, g, 16);
	return 0;
}

static int parse_ipv6(const char *text, uint8_t mgid[16], char *err, size_t errlen)
{
	uint8_t g[16];

	if (inet_pton(AF_INET6, text, g) != 1)
		return fail(err, errlen, "not a valid IPv6 address");
	if (check_multicast(g, err, errlen))
		return -1;
	memcpy(mgid, g, 16);
	return 0;
}

/* Every token is decimal digits or starts with 0x, as in upstream's form. */
static bool all_numeric_tokens(const char *text)
{
	const char *t = text;

	for (;;) {
		const char *p = t;

		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
			p += 2;
		else
			while (is_dec(*p))
				p++;
		/* the rest of a 0x token is checked by parse_byte_token() */
		while (*p && *p != ':' && hexval(*p) >= 0 && p > t + 1 &&
		       (t[1] == 'x' || t[1] == 'X'))
			p++;
		if (*p == '\0')
			return true;
		if (*p != ':')
			return false;
		t = p + 1;
	}
}

int pt_mgid_parse(const char *text, uint8_t mgid[16], char *err, size_t errlen)
{
	size_t len, colons = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!text || !*text)
		return fail(err, errlen, "empty MGID");
	len = strnlen(text, PT_MGID_TEXT_MAX + 1);
	if (len > PT_MGID_TEXT_MAX)
		return fail(err, errlen, "MGID text longer than %d characters", PT_MGID_TEXT_MAX);
	for (const char *p = text; *p; p++) {
		if (*p == ':')
			colons++;
		else if (hexval(*p) < 0 && *p != '.' && *p != 'x' && *p != 'X')
			return fail(err, errlen, *p > 0x20 && *p < 0x7f ? "unexpected character '%c'" :
				    "unexpected character 0x%02x", (unsigned char)*p);
	}
	if (colons == 0) {
		if (strchr(text, '.'))
			return parse_dotted(text, mgid, err, errlen);
		return fail(err, errlen,
			    "expected a dotted IPv4 group, 16 colon-separated bytes or IPv6 text");
	}
	/* 16 tokens can never be IPv6 text; "::", embedded IPv4 or hex words
	 * can never be upstream's byte form. 8 plain numbers are read as IPv6. */
	if (colons == 15 || (!strstr(text, "::") && !strchr(text, '.') && colons != 7 &&
			     all_numeric_tokens(text)))
		return parse_tokens(text, mgid, err, errlen);
	return parse_ipv6(text, mgid, err, errlen);
}

int pt_mgid_format(const uint8_t mgid[16], char *buf, size_t len)
{
	if (!buf || len < PT_MGID_STRLEN)
		return -1;
	return inet_ntop(AF_INET6, mgid, buf, (socklen_t)len) ? 0 : -1;
}
