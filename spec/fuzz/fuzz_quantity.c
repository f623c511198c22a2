/*
 * fuzz_quantity.c: ls_quantity_parse (scales 0 and 3) and ls_time_parse on the
 * input as a NUL-terminated string.
 *
 * Besides the sanitizers, two cross-checks hold for every input:
 *  - Both scales read the same number, rounded up: ceil(x) at scale 0 is
 *    ceil(ceil(1000 x) / 1000), so a value at scale 3 fixes the one at scale 0,
 *    and garbage is garbage at any scale.
 *  - An accepted timestamp agrees with glibc's timegm on the same fields.
 */
#include "fuzz_common.h"

#include <time.h>

#include "luasched/model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static bool is_format_error(const ls_error *e)
{
    return strncmp(e->msg, "invalid quantity \"", 18) == 0;
}

static int64_t ceil_div_1000(int64_t v)
{
    int64_t q = v / 1000, r = v % 1000;
    return r > 0 ? q + 1 : q;   /* C division truncates: only positives round up */
}

static void check_quantity(const char *s)
{
    int64_t v0 = 0x5a5a, v3 = 0x5a5a;
    ls_error e0 = {{0}}, e3 = {{0}};
    bool ok0 = ls_quantity_parse(s, 0, &v0, &e0);
    bool ok3 = ls_quantity_parse(s, 3, &v3, &e3);
    FUZZ_CHECK(ok0 || e0.msg[0], "no error message at scale 0 for \"%s\"", s);
    FUZZ_CHECK(ok3 || e3.msg[0], "no error message at scale 3 for \"%s\"", s);
    bool garbage0 = !ok0 && is_format_error(&e0), garbage3 = !ok3 && is_format_error(&e3);
    FUZZ_CHECK(garbage0 == garbage3, "\"%s\": scale 0 says \"%s\", scale 3 says \"%s\"", s,
               ok0 ? "ok" : e0.msg, ok3 ? "ok" : e3.msg);
    if (ok3) {
        FUZZ_CHECK(ok0, "\"%s\" fits at scale 3 (%lld) but not at scale 0: %s", s, (long long)v3,
                   e0.msg);
        FUZZ_CHECK(v0 == ceil_div_1000(v3), "\"%s\": %lld at scale 0, %lld at scale 3", s,
                   (long long)v0, (long long)v3);
    }
    /* Optional arguments: a NULL error must be accepted. */
    int64_t v = 0;
    FUZZ_CHECK(ls_quantity_parse(s, 0, &v, NULL) == ok0 && (!ok0 || v == v0), "NULL err differs");
}

/* The timestamp was accepted, so its shape is fixed: YYYY-MM-DDTHH:MM:SS,
 * then an optional fraction, then Z or +HH:MM / -HH:MM. */
static void check_time(const char *s, int64_t ns)
{
    struct tm tm = {0};
    tm.tm_year = atoi(s) - 1900;
    tm.tm_mon = atoi(s + 5) - 1;
    tm.tm_mday = atoi(s + 8);
    tm.tm_hour = atoi(s + 11);
    tm.tm_min = atoi(s + 14);
    tm.tm_sec = atoi(s + 17);
    int64_t secs = (int64_t)timegm(&tm);
    const char *z = s + 19;
    int64_t frac = 0;
    if (*z == '.') {
        int64_t unit = 100000000;
        for (z++; *z >= '0' && *z <= '9'; z++, unit /= 10)
            frac += (*z - '0') * unit;
    }
    if (*z == '+' || *z == '-') {
        int64_t off = atoi(z + 1) * 3600 + atoi(z + 4) * 60;
        secs -= *z == '-' ? -off : off;
    }
    __int128 want = (__int128)secs * 1000000000 + frac;
    FUZZ_CHECK(want == ns, "\"%s\": parsed %lld ns, timegm says %lld s + %lld ns", s, (long long)ns,
               (long long)secs, (long long)frac);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    check_quantity(s);
    int64_t ns = 0;
    if (ls_time_parse(s, &ns))
        check_time(s, ns);
    free(s);
    return 0;
}
