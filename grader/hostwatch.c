/* hostwatch.c - the C library's malloc family, replaced so that a grader sees the host memory a lab call
 * allocates on the test's own thread (grader/hostwatch.h says how). Course staff only.
 *
 * Linked as an object into a grader, these definitions take the place of the C library's for the whole process;
 * each hands the call to glibc's own __libc_* function. Outside a watch they only do that.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

#include "grader/hostwatch.h"

extern void __libc_free(void *p);
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

#define MAX_BLOCKS 256 /* blocks noted per watch (more are still counted) */

static _Thread_local int watching; /* this thread's allocations are watched */
static struct {
    void *p; /* NULL: freed or moved by realloc under watch */
    size_t n; /* bytes asked */
} blocks[MAX_BLOCKS];
static int nblocks;
static long count;      /* blocks of HOSTWATCH_COUNT_MIN bytes or more */
static size_t largest;  /* bytes asked */
static size_t fail_min; /* 0: no failure on demand */
static long fail_at, seen;
static int fired;
static void (*volatile free_hook)(void *p);

/* fail_due - 1 when this watched allocation of n bytes must fail (fired then set) */
static int fail_due(size_t n)
{
    if (!watching || fail_min == 0 || n < fail_min)
        return 0;
    if (seen++ != fail_at)
        return 0;
    fired = 1;
    return 1;
}

/* note - returns p; p, n bytes asked, allocated: noted and counted when this thread is watched */
static void *note(void *p, size_t n)
{
    if (!p || !watching)
        return p;
    if (nblocks < MAX_BLOCKS) {
        blocks[nblocks].p = p;
        blocks[nblocks].n = n;
        nblocks++;
    }
    if (n >= HOSTWATCH_COUNT_MIN)
        count++;
    if (n > largest)
        largest = n;
    return p;
}

/* forget - p freed or moved by realloc under watch: no longer a block the call holds */
static void forget(void *p)
{
    for (int i = 0; i < nblocks; i++)
        if (blocks[i].p == p)
            blocks[i].p = NULL;
}

void free(void *p)
{
    void (*hook)(void *) = free_hook;
    if (hook && p)
        hook(p);
    if (watching && p)
        forget(p);
    __libc_free(p);
}

void *malloc(size_t n)
{
    if (fail_due(n)) {
        errno = ENOMEM;
        return NULL;
    }
    return note(__libc_malloc(n), n);
}

void *calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    if (fail_due(n * size)) {
        errno = ENOMEM;
        return NULL;
    }
    return note(__libc_calloc(n, size), n * size);
}

void *realloc(void *p, size_t n)
{
    if (fail_due(n)) {
        errno = ENOMEM;
        return NULL;
    }
    void *q = __libc_realloc(p, n);
    if (q && watching) {
        forget(p);
        note(q, n);
    }
    return q;
}

void *memalign(size_t align, size_t n)
{
    if (fail_due(n)) {
        errno = ENOMEM;
        return NULL;
    }
    return note(__libc_memalign(align, n), n);
}

void *aligned_alloc(size_t align, size_t n)
{
    return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align == 0 || align % sizeof(void *) != 0 || (align & (align - 1)) != 0)
        return EINVAL;
    if (fail_due(n))
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = note(p, n);
    return 0;
}

void *valloc(size_t n)
{
    if (fail_due(n)) {
        errno = ENOMEM;
        return NULL;
    }
    return note(__libc_valloc(n), n);
}

void *pvalloc(size_t n)
{
    if (fail_due(n)) {
        errno = ENOMEM;
        return NULL;
    }
    return note(__libc_pvalloc(n), n);
}

void hostwatch_begin(size_t fail_min_bytes, long fail_number)
{
    nblocks = 0;
    count = 0;
    largest = 0;
    fail_min = fail_min_bytes;
    fail_at = fail_number;
    seen = 0;
    fired = 0;
    watching = 1;
}

void hostwatch_resume(void)
{
    watching = 1;
}

void hostwatch_on_free(void (*hook)(void *p))
{
    free_hook = hook;
}

void hostwatch_end(void)
{
    watching = 0;
    fail_min = 0;
}

long hostwatch_count(void)
{
    return count;
}

size_t hostwatch_largest(void)
{
    return largest;
}

int hostwatch_fired(void)
{
    return fired;
}

void *hostwatch_block_of(const void *p, size_t *n)
{
    for (int i = nblocks - 1; i >= 0; i--) {
        const char *b = blocks[i].p;
        if (b && (const char *)p >= b && (const char *)p < b + blocks[i].n) {
            *n = blocks[i].n;
            return blocks[i].p;
        }
    }
    return NULL;
}
