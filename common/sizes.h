/* sizes.h - parse and print byte sizes: "4K", "64M", "1G", "4097".
 *
 * Part of xferlab's common library; pure CPU code with unit tests. Units are
 * binary (K = 1024 bytes); "KiB", "KB", "k" all mean 1024. A bad, zero or
 * too-large size is an error with a message, never a crash.
 */
#ifndef XL_SIZES_H
#define XL_SIZES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xl_parse_size - parses s into *out; 0 on success, -1 with one line in err when s is
 * empty, not a number, has an unknown unit, is zero, or exceeds max_bytes */
int xl_parse_size(const char *s, size_t max_bytes, size_t *out, char *err, size_t err_len);

/* xl_format_size - writes "4 KiB", "256 MiB", "1 GiB" (exact multiples) or "4097 B" into buf; returns buf */
const char *xl_format_size(size_t bytes, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
