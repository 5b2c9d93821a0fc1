/* streamcopy.c - unit tests of common/streamcopy (a memcpy with streaming stores). CPU only.
 *
 * Every copy lands in a poisoned buffer with guard bytes either side of the destination, from fresh random data,
 * at every offset of source and destination within a 64-byte line: the heads, tails and whole lines must add up
 * to exactly the bytes asked for, and not one byte more.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/buffers.h"
#include "common/streamcopy.h"

#define GUARD 192 /* poisoned bytes checked either side of the destination: three lines */

static unsigned char *src_buf, *dst_buf;
static size_t buf_bytes;

/* setup_bufs - a random source and a destination with room for bytes at any line offset, with guards */
static void setup_bufs(size_t bytes)
{
    buf_bytes = bytes + 64 + 2 * GUARD;
    src_buf = aligned_alloc(64, (buf_bytes + 63) & ~(size_t)63);
    dst_buf = aligned_alloc(64, (buf_bytes + 63) & ~(size_t)63);
    cr_assert(src_buf && dst_buf, "out of memory for %zu bytes", buf_bytes);
    xl_fill_random(src_buf, buf_bytes, xl_fresh_seed());
}

static void free_bufs(void)
{
    free(src_buf);
    free(dst_buf);
}

/* check_copy - copies bytes from src_buf + GUARD + src_off to dst_buf + GUARD + dst_off (offsets 0..63) and
 * asserts the copy exact and the guards and the rest of the destination buffer untouched */
static void check_copy(size_t dst_off, size_t src_off, size_t bytes)
{
    size_t span = GUARD + dst_off + bytes + GUARD, bad = 0;
    unsigned char *dst = dst_buf + GUARD + dst_off;
    const unsigned char *src = src_buf + GUARD + src_off;
    xl_poison(dst_buf, span);
    xl_stream_copy(dst, src, bytes);
    cr_assert(xl_compare(dst, src, bytes, &bad) == 0,
              "%zu bytes, destination at line offset %zu, source at %zu: byte %zu differs", bytes, dst_off, src_off,
              bad);
    cr_assert(xl_check_poison(dst_buf, GUARD + dst_off, &bad) == 0,
              "%zu bytes, destination at line offset %zu, source at %zu: wrote %zu bytes before the destination",
              bytes, dst_off, src_off, GUARD + dst_off - bad);
    cr_assert(xl_check_poison(dst + bytes, GUARD, &bad) == 0,
              "%zu bytes, destination at line offset %zu, source at %zu: wrote byte %zu after the destination's end",
              bytes, dst_off, src_off, bad);
}

Test(streamcopy, small_sizes_at_every_offset, .timeout = 60)
{
    setup_bufs(300);
    for (size_t bytes = 0; bytes <= 300; bytes++)
        for (size_t d = 0; d < 64; d++)
            for (size_t s = 0; s < 64; s++)
                check_copy(d, s, bytes);
    free_bufs();
}

Test(streamcopy, sizes_around_the_streaming_threshold_at_every_offset, .timeout = 60)
{
    setup_bufs(XL_STREAM_MIN_BYTES + 200);
    for (size_t bytes = XL_STREAM_MIN_BYTES - 3; bytes <= XL_STREAM_MIN_BYTES + 200; bytes++)
        for (size_t d = 0; d < 64; d++)
            for (size_t s = 0; s < 64; s += 9) /* 0, 9, ..., 63: even, odd, and the line's last byte */
                check_copy(d, s, bytes);
    free_bufs();
}

Test(streamcopy, large_awkward_sizes_at_every_destination_offset, .timeout = 120)
{
    const size_t sizes[] = {8191, 8192, 8193, 65536 - 1, 65536 + 13, 100003, ((size_t)1 << 20) + 61,
                            ((size_t)3 << 20) - 127};
    const size_t src_offs[] = {0, 1, 16, 63};
    setup_bufs((size_t)3 << 20);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t d = 0; d < 64; d++)
            for (size_t k = 0; k < sizeof src_offs / sizeof src_offs[0]; k++)
                check_copy(d, src_offs[k], sizes[i]);
    free_bufs();
}

Test(streamcopy, zero_bytes_touches_nothing)
{
    unsigned char buf[64];
    size_t bad = 0;
    xl_poison(buf, sizeof buf);
    xl_stream_copy(buf + 7, "x", 0);
    xl_stream_copy(NULL, NULL, 0);
    cr_assert(xl_check_poison(buf, sizeof buf, &bad) == 0, "a copy of 0 bytes wrote byte %zu", bad);
}
