/* sizes.c - byte sizes from and to text (see sizes.h). */
#include "sizes.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

/* unit_shift - the power of two a unit suffix stands for; -1 when unknown */
static int unit_shift(const char *u)
{
    static const struct { const char *name; int shift; } units[] = {
        {"", 0}, {"b", 0}, {"k", 10}, {"kb", 10}, {"kib", 10}, {"m", 20}, {"mb", 20},
        {"mib", 20}, {"g", 30}, {"gb", 30}, {"gib", 30}, {"t", 40}, {"tb", 40}, {"tib", 40},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcasecmp(u, units[i].name) == 0)
            return units[i].shift;
    return -1;
}

int xl_parse_size(const char *s, size_t max_bytes, size_t *out, char *err, size_t err_len)
{
    char maxs[32];
    if (!s || !*s) {
        snprintf(err, err_len, "empty size: give a number of bytes such as 4096, 64K, 16M or 1G");
        return -1;
    }
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (!isdigit((unsigned char)*p)) {
        snprintf(err, err_len, "bad size '%s': expected a number of bytes such as 4096, 64K, 16M or 1G", s);
        return -1;
    }
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    int shift = unit_shift(end);
    if (shift < 0) {
        snprintf(err, err_len, "bad size '%s': unknown unit '%s' (use K, M or G, for KiB, MiB, GiB)", s, end);
        return -1;
    }
    if (errno == ERANGE || v > (UINT64_MAX >> shift) || (v << shift) > SIZE_MAX) {
        snprintf(err, err_len, "size '%s' is too large (at most %s)", s,
                 xl_format_size(max_bytes, maxs, sizeof maxs));
        return -1;
    }
    v <<= shift;
    if (v == 0) {
        snprintf(err, err_len, "size '%s' is zero: give at least 1 byte", s);
        return -1;
    }
    if (v > max_bytes) {
        snprintf(err, err_len, "size '%s' is too large (at most %s)", s,
                 xl_format_size(max_bytes, maxs, sizeof maxs));
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

const char *xl_format_size(size_t bytes, char *buf, size_t len)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    size_t v = bytes;
    while (u < 4 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%zu %s", v, names[u]);
    return buf;
}
