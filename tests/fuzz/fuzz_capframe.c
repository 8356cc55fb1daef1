/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmacap's packet parsers (capture/frame.h, capture/seq.h): the fuzzer's
 * bytes are a received Ethernet frame; the first byte also picks a sequence
 * number format.
 * fuzz-sources: capture/frame.c capture/seq.c
 * fuzz-flags: -max_len=2048
 *
 * Properties: a parsed frame's application data lies inside the frame; a
 * sequence number is read only when it fits in it; the accounting never
 * counts more late packets than packets and a gap never goes past the
 * counter's space; a GRH rebuilt into a frame parses back as UDP 4791 with
 * the GRH's addresses. */
#include "fuzz.h"
#include "capture/frame.h"
#include "capture/seq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cap_frame f;
	uint8_t *buf = (uint8_t *)fuzz_dup(data, size);

	if (cap_frame_parse(buf, size, &f) == 0) {
		FUZZ_ASSERT(f.app_off <= size && f.app_len <= size - f.app_off);
		if (size) {
			static const unsigned widths[4] = { 1, 2, 4, 8 };
			struct cap_seq_fmt fmt = { .offset = (size_t)(data[0] >> 3), .width = widths[data[0] & 3],
						   .little_endian = data[0] & 4 };
			struct cap_seq s = { 0 };
			uint64_t v, n = 0, mask = fmt.width == 8 ? UINT64_MAX : (1ull << (8 * fmt.width)) - 1;
			bool ok = cap_seq_read(&fmt, buf + f.app_off, f.app_len, &v);

			FUZZ_ASSERT(ok == (fmt.offset + fmt.width <= f.app_len));
			/* every 8-byte step of the payload as a number, in turn */
			for (size_t o = 0; ok && o + fmt.width <= f.app_len; o += 8, n++) {
				struct cap_seq_fmt g = fmt;

				g.offset = o;
				FUZZ_ASSERT(cap_seq_read(&g, buf + f.app_off, f.app_len, &v));
				FUZZ_ASSERT(v <= mask);
				cap_seq_update(&s, fmt.width, v);
				FUZZ_ASSERT(s.late <= n);
			}
		}
	}
	if (size >= CAP_GRH_LEN) {
		uint8_t out[CAP_UD_WIRE_HDR];

		if (cap_frame_from_grh(out, buf, 1, 2, size) == 0) {
			FUZZ_ASSERT(cap_frame_parse(out, sizeof(out), &f) == 0);
			FUZZ_ASSERT(f.dport == CAP_ROCE_PORT);
			FUZZ_ASSERT(!memcmp(&f.src, buf + 32, 4) && !memcmp(&f.dst, buf + 36, 4));
		}
	}
	free(buf);
	return 0;
}
