/* buffers.c - unit tests of common/buffers (random fill, poison, compare). CPU only. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/buffers.h"

Test(buffers, same_seed_same_bytes_any_length)
{
    unsigned char a[37], b[37];
    uint64_t s = xl_fresh_seed();
    xl_fill_random(a, sizeof a, s);
    xl_fill_random(b, sizeof b, s);
    cr_assert(memcmp(a, b, sizeof a) == 0);
    xl_fill_random(b, 5, s);
    cr_assert(memcmp(a, b, 5) == 0, "a shorter fill is a prefix of a longer one");
}

Test(buffers, fresh_seeds_differ)
{
    uint64_t a = xl_fresh_seed(), b = xl_fresh_seed();
    cr_assert(a != b);
}

Test(buffers, random_data_is_not_constant)
{
    unsigned char a[4096];
    int counts[256] = {0}, distinct = 0;
    xl_fill_random(a, sizeof a, xl_fresh_seed());
    for (size_t i = 0; i < sizeof a; i++)
        distinct += counts[a[i]]++ == 0;
    cr_assert(distinct > 200, "only %d distinct byte values in 4 KiB", distinct);
}

Test(buffers, compare_finds_first_difference)
{
    size_t n = 100003, bad = 0;
    unsigned char *a = malloc(n), *b = malloc(n);
    xl_fill_random(a, n, 7);
    memcpy(b, a, n);
    cr_assert(xl_compare(a, b, n, &bad) == 0);
    b[n - 1] ^= 1;
    b[70001] ^= 0x80;
    cr_assert(xl_compare(a, b, n, &bad) == -1);
    cr_assert_eq(bad, 70001);
    free(a);
    free(b);
}

Test(buffers, poison_check_finds_a_changed_byte)
{
    unsigned char a[64];
    size_t bad = 0;
    xl_poison(a, sizeof a);
    cr_assert(xl_check_poison(a, sizeof a, &bad) == 0);
    a[63] = 0;
    cr_assert(xl_check_poison(a, sizeof a, &bad) == -1 && bad == 63);
}
