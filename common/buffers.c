/* buffers.c - random fill, poison and verification (see buffers.h). */
#include "buffers.h"

#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* splitmix64: a fast, well-mixed stream; good enough to catch any misplaced byte */
static uint64_t next64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t xl_fresh_seed(void)
{
    static uint64_t counter;
    uint64_t s = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, &s, sizeof s) != (ssize_t)sizeof s)
            s = 0;
        close(fd);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s ^= (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ ((uint64_t)getpid() << 16);
    s ^= ++counter * 0xD1B54A32D192ED03ull;
    return next64(&s);
}

void xl_fill_random(void *buf, size_t bytes, uint64_t seed)
{
    unsigned char *p = buf;
    uint64_t s = seed;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t v = next64(&s);
        memcpy(p + i, &v, 8);
    }
    if (i < bytes) {
        uint64_t v = next64(&s);
        memcpy(p + i, &v, bytes - i);
    }
}

void xl_poison(void *buf, size_t bytes)
{
    memset(buf, XL_POISON_BYTE, bytes);
}

/* first_diff - offset of the first differing byte in a block known to differ */
static size_t first_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

int xl_compare(const void *got, const void *want, size_t bytes, size_t *first_bad)
{
    const unsigned char *g = got, *w = want;
    const size_t block = 1 << 16;
    for (size_t off = 0; off < bytes; off += block) {
        size_t n = bytes - off < block ? bytes - off : block;
        if (memcmp(g + off, w + off, n) != 0) {
            if (first_bad)
                *first_bad = off + first_diff(g + off, w + off, n);
            return -1;
        }
    }
    return 0;
}

int xl_check_poison(const void *buf, size_t bytes, size_t *first_bad)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < bytes; i++) {
        if (p[i] != XL_POISON_BYTE) {
            if (first_bad)
                *first_bad = i;
            return -1;
        }
    }
    return 0;
}
