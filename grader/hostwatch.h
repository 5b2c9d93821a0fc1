/* hostwatch.h - the host memory a lab call allocates on the test's own thread: noted, counted, and failed on
 * demand. Course staff only; linked into the graders the Makefile names in HOSTWATCH_LABS.
 *
 * hostwatch.c replaces the C library's malloc family (each hands the call to glibc's own __libc_*). Between
 * hostwatch_begin and hostwatch_end, every block allocated on the thread that called hostwatch_begin is noted with
 * the size asked, and one freed there is forgotten. Other threads (the CUDA runtime's, a lab's worker team) are never watched.
 */
#ifndef XL_GRADER_HOSTWATCH_H
#define XL_GRADER_HOSTWATCH_H

#include <stddef.h>

/* blocks smaller than this are not counted (a runtime's own small bookkeeping); they are still noted */
#define HOSTWATCH_COUNT_MIN 256

/* hostwatch_begin - watches this thread's host allocations from now, none noted yet; fail_min > 0: the allocation
 * numbered fail_at (from 0) among those of at least fail_min bytes fails as out of memory (ENOMEM, NULL) */
void hostwatch_begin(size_t fail_min, long fail_at);

/* hostwatch_end - stops watching; what the watch noted stays readable until the next hostwatch_begin */
void hostwatch_end(void);

/* hostwatch_count - blocks of HOSTWATCH_COUNT_MIN bytes or more allocated under the last watch */
long hostwatch_count(void);

/* hostwatch_largest - the largest block allocated under the last watch, bytes asked (0: none) */
size_t hostwatch_largest(void);

/* hostwatch_fired - 1 when the failure on demand of the last watch happened */
int hostwatch_fired(void);

/* hostwatch_block_of - the block noted under the last watch, not freed or moved by realloc on a watched thread since,
 * that holds p: its start, and the size asked in *n; NULL when none does (the call got that memory some other way:
 * mmap, say) */
void *hostwatch_block_of(const void *p, size_t *n);

/* hostwatch_resume - watches this thread again, keeping what the last watch noted: frees now forget those blocks
 * (hostwatch_block_of), and new blocks are noted and counted beside them; hostwatch_end stops it */
void hostwatch_resume(void);

/* hostwatch_on_free - hook is called with every block about to be freed, on any thread, until it is set again
 * (NULL: none); it must not allocate or free */
void hostwatch_on_free(void (*hook)(void *p));

#endif
