/* sizes.c - unit tests of common/sizes (parsing and printing byte sizes). CPU only. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "common/sizes.h"

#define GIB ((size_t)1 << 30)

/* parse - parses s with a 4 GiB limit; returns the size or (size_t)-1 on error */
static size_t parse(const char *s, char *err)
{
    size_t v = 0;
    return xl_parse_size(s, 4 * GIB, &v, err, 256) == 0 ? v : (size_t)-1;
}

Test(sizes, units_are_binary)
{
    char err[256];
    cr_assert(parse("4096", err) == 4096);
    cr_assert(parse("4K", err) == 4096);
    cr_assert(parse("64M", err) == 64u << 20);
    cr_assert(parse("1G", err) == GIB);
    cr_assert(parse("16MiB", err) == 16u << 20);
    cr_assert(parse("8kb", err) == 8192);
    cr_assert(parse("4097", err) == 4097);
}

Test(sizes, bad_input_is_an_error_with_a_message)
{
    const char *bad[] = {"", "abc", "-4K", "4Q", "1.5M", "K", "4 K B"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256] = "";
        cr_assert(parse(bad[i], err) == (size_t)-1, "'%s' must be rejected", bad[i]);
        cr_assert(strlen(err) > 10 && !strchr(err, '\n'), "'%s' needs a one-line message, got '%s'", bad[i], err);
    }
}

Test(sizes, zero_too_large_and_overflow_are_rejected)
{
    char err[256];
    cr_assert(parse("0", err) == (size_t)-1 && strstr(err, "zero"));
    cr_assert(parse("5G", err) == (size_t)-1 && strstr(err, "too large"));
    cr_assert(parse("99999999999999999999999", err) == (size_t)-1 && strstr(err, "too large"));
    cr_assert(parse("17179869184G", err) == (size_t)-1 && strstr(err, "too large"));
}

Test(sizes, format_uses_the_largest_exact_unit)
{
    char buf[32];
    cr_assert_str_eq(xl_format_size(4096, buf, sizeof buf), "4 KiB");
    cr_assert_str_eq(xl_format_size(256u << 20, buf, sizeof buf), "256 MiB");
    cr_assert_str_eq(xl_format_size(GIB, buf, sizeof buf), "1 GiB");
    cr_assert_str_eq(xl_format_size(4097, buf, sizeof buf), "4097 B");
}
