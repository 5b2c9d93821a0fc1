/* buffers.h - fresh random data, poison and byte-exact verification of host buffers.
 *
 * Part of xferlab's common library; pure CPU code with unit tests. Graders fill
 * sources with data from a fresh seed on every run, poison destinations, and
 * verify byte by byte, guard bytes included.
 */
#ifndef XL_BUFFERS_H
#define XL_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The byte that poisoned memory holds; random data may contain it, so verify, never scan for it. */
#define XL_POISON_BYTE 0xA5

/* xl_fresh_seed - a seed that differs on every call and every run (urandom, time, pid, counter) */
uint64_t xl_fresh_seed(void);

/* xl_fill_random - fills bytes of buf with the pseudo-random stream of seed (any size, any alignment) */
void xl_fill_random(void *buf, size_t bytes, uint64_t seed);

/* xl_poison - sets bytes of buf to XL_POISON_BYTE */
void xl_poison(void *buf, size_t bytes);

/* xl_compare - 0 when got equals want over bytes; else -1 with the first differing offset in *first_bad */
int xl_compare(const void *got, const void *want, size_t bytes, size_t *first_bad);

/* xl_check_poison - 0 when all bytes still hold the poison; else -1 with the first changed offset */
int xl_check_poison(const void *buf, size_t bytes, size_t *first_bad);

#ifdef __cplusplus
}
#endif

#endif
