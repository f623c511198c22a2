/*
 * test_quantity.c: resource quantities and RFC 3339 timestamps. Every expected
 * value is worked out from Kubernetes semantics (resource.Quantity scaled with
 * rounding up, metav1.Time), never from running the code under test.
 */
#include "luasched/model.h"
#include "test.h"

#include <stdbool.h>
#include <stdlib.h>

#define SENTINEL ((int64_t)0x5a5a5a5a)

#define FORMAT_HELP                                                                 \
    "expected a number with an optional suffix (Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, " \
    "M, G, T, P, E) or exponent"

/* Parses s at scale and expects success with value want. */
#define QTY_OK(s, scale, want)                                                      \
    do {                                                                            \
        int64_t v_ = SENTINEL;                                                      \
        ls_error e_ = {{0}};                                                        \
        bool r_ = ls_quantity_parse((s), (scale), &v_, &e_);                        \
        CHECK(r_);                                                                  \
        if (!r_)                                                                    \
            fprintf(stderr, "  input \"%s\": %s\n", (s), e_.msg);                   \
        CHECK_INT(v_, (want));                                                      \
    } while (0)

/* Expects failure whose message contains want_msg, with *out untouched. */
#define QTY_FAIL(s, scale, want_msg)                                                \
    do {                                                                            \
        int64_t v_ = SENTINEL;                                                      \
        ls_error e_ = {{0}};                                                        \
        bool r_ = ls_quantity_parse((s), (scale), &v_, &e_);                        \
        CHECK(!r_);                                                                 \
        CHECK_INT(v_, SENTINEL);                                                    \
        CHECK_CONTAINS(e_.msg, (want_msg));                                         \
    } while (0)

#define QTY_GARBAGE(s) QTY_FAIL((s), 0, "invalid quantity \"" s "\": " FORMAT_HELP)
#define QTY_TOO_LARGE(s, scale) QTY_FAIL((s), (scale), "quantity \"" s "\" is too large")

#define TIME_OK(s, want)                                                            \
    do {                                                                            \
        int64_t t_ = SENTINEL;                                                      \
        CHECK(ls_time_parse((s), &t_));                                             \
        CHECK_INT(t_, (want));                                                      \
    } while (0)

#define TIME_BAD(s)                                                                 \
    do {                                                                            \
        int64_t t_ = SENTINEL;                                                      \
        CHECK(!ls_time_parse((s), &t_));                                            \
        CHECK_INT(t_, SENTINEL);                                                    \
    } while (0)

static void test_plain_numbers(void)
{
    QTY_OK("0", 0, 0);
    QTY_OK("0", 3, 0);
    QTY_OK("-0", 0, 0);
    QTY_OK("+0", 3, 0);
    QTY_OK("000", 0, 0);
    QTY_OK("0.000", 3, 0);
    QTY_OK("00012", 0, 12);
    QTY_OK("1", 0, 1);
    QTY_OK("1", 3, 1000);
    QTY_OK("+1", 0, 1);
    QTY_OK("2.5", 3, 2500);
    QTY_OK("0.1", 3, 100);
    QTY_OK("5.", 0, 5);
    QTY_OK("5.", 3, 5000);
    QTY_OK(".5", 3, 500);
    QTY_OK(".5", 0, 1);            /* 0.5 rounds up */
    QTY_OK("1.001", 0, 2);
    QTY_OK("1.0001", 3, 1001);     /* 1000.1 millis round up */
    QTY_OK("1.000", 0, 1);         /* trailing zeros are exact */
    QTY_OK("9223372036854775807", 0, INT64_MAX);
    QTY_OK("9223372036854775806.5", 0, INT64_MAX);
    QTY_OK("9223372036854775807m", 3, INT64_MAX);
    QTY_OK("9223372036854775807m", 0, 9223372036854776);  /* ...775.807 up */
    QTY_OK("9223372036854775.807", 3, INT64_MAX);
    /* Negative scale: not used by the scheduler, but the arithmetic is general. */
    QTY_OK("1500", -3, 2);
    QTY_OK("1000", -3, 1);
}

static void test_decimal_suffixes(void)
{
    QTY_OK("1n", 0, 1);
    QTY_OK("1n", 3, 1);
    QTY_OK("1n", 9, 1);
    QTY_OK("1.5n", 9, 2);
    QTY_OK("999n", 3, 1);
    QTY_OK("1000000n", 3, 1);
    QTY_OK("1000001n", 3, 2);
    QTY_OK("1u", 0, 1);
    QTY_OK("1u", 9, 1000);
    QTY_OK("1000u", 3, 1);
    QTY_OK("1500u", 3, 2);
    QTY_OK("1m", 0, 1);
    QTY_OK("1m", 3, 1);
    QTY_OK("100m", 3, 100);
    QTY_OK("100m", 0, 1);
    QTY_OK("1000m", 0, 1);
    QTY_OK("1500m", 0, 2);
    QTY_OK("0.001m", 3, 1);
    QTY_OK("0.5m", 3, 1);
    QTY_OK("1k", 0, 1000);
    QTY_OK("1k", 3, 1000000);
    QTY_OK("1.5k", 0, 1500);
    QTY_OK("1M", 0, 1000000);
    QTY_OK("128M", 0, 128000000);
    QTY_OK("1G", 0, 1000000000);
    QTY_OK("1G", 3, 1000000000000);
    QTY_OK("1T", 0, 1000000000000);
    QTY_OK("1P", 0, 1000000000000000);
    QTY_OK("1E", 0, 1000000000000000000);
    QTY_OK("9E", 0, 9000000000000000000);
    QTY_OK("9.223372036854775807E", 0, INT64_MAX);
    QTY_OK("1P", 3, 1000000000000000000);
}

static void test_binary_suffixes(void)
{
    QTY_OK("1Ki", 0, 1024);
    QTY_OK("1Ki", 3, 1024000);
    QTY_OK("1Mi", 0, 1048576);
    QTY_OK("200Mi", 0, 209715200);
    QTY_OK("1Gi", 0, 1073741824);
    QTY_OK("1.5Gi", 0, 1610612736);
    QTY_OK("1Ti", 0, 1099511627776);
    QTY_OK("1Pi", 0, 1125899906842624);
    QTY_OK("1Pi", 3, 1125899906842624000);
    QTY_OK("8Pi", 3, 9007199254740992000);
    QTY_OK("1Ei", 0, 1152921504606846976);
    QTY_OK("7Ei", 0, 8070450532247928832);
    QTY_OK("0.5Ki", 0, 512);
    QTY_OK(".5Ki", 0, 512);
    QTY_OK("5.Ki", 0, 5120);
    QTY_OK("1.5Ki", 3, 1536000);
    QTY_OK("1.1Ki", 0, 1127);       /* 1126.4 up */
    QTY_OK("1.1Ki", 3, 1126400);
    QTY_OK("0.001Ki", 0, 2);        /* 1.024 up */
    QTY_OK("0.0009765625Ki", 0, 1); /* exactly 2^-10 * 2^10 */
    QTY_OK("0Ei", 0, 0);
}

static void test_exponents(void)
{
    QTY_OK("1e3", 0, 1000);
    QTY_OK("1E3", 0, 1000);
    QTY_OK("1e+3", 0, 1000);
    QTY_OK("1e0", 0, 1);
    QTY_OK("1e-0", 0, 1);
    QTY_OK("0.5e3", 0, 500);
    QTY_OK("1.5e3", 3, 1500000);
    QTY_OK("1E-3", 3, 1);
    QTY_OK("1e-3", 0, 1);
    QTY_OK("1.5E-2", 3, 15);
    QTY_OK("1.5E-2", 0, 1);
    QTY_OK("1.5e-4", 3, 1);         /* 0.15 millis up */
    QTY_OK("12e-1", 0, 2);
    QTY_OK("1e18", 0, 1000000000000000000);
    QTY_OK("1e15", 3, 1000000000000000000);
    QTY_OK("0e100", 0, 0);
    QTY_OK("0e99999999999999999999999999", 0, 0);
    QTY_OK("1e-99999999999999999999999999", 0, 1);   /* tiny positive rounds up */
    QTY_OK("1e-99999999999999999999999999", 3, 1);
    QTY_OK("-1e-99999", 0, 0);
    QTY_OK("123e-2", 3, 1230);
}

static void test_many_digits(void)
{
    QTY_OK("0.000000000000000000001", 0, 1);
    QTY_OK("0.000000000000000000001", 3, 1);
    QTY_OK("-0.000000000000000000001", 0, 0);
    QTY_OK("0.0000000000000000000000000000000000000000", 0, 0);
    QTY_OK("0000000000000000000000000000000000000000001", 0, 1);
    QTY_OK("1.0000000000000000000000000000000000000001", 0, 2);
    QTY_OK("1.0000000000000000000000000000000000000001", 3, 1001);
    QTY_OK("1.0000000000000000000000000000000000000000", 3, 1000);
    QTY_OK("100000000000000000000000000000000000000e-38", 0, 1);
    QTY_OK("100000000000000000000000000000000000001e-38", 0, 2);
    /* 1 + 2^-60, written out exactly (60 fraction digits): times 2^60 it is
     * 2^60 + 1 exactly, so a digit beyond what fits any machine integer decides
     * the rounding. */
    QTY_OK("1.000000000000000000867361737988403547205962240695953369140625Ei", 0,
           1152921504606846977);
    QTY_OK("1.000000000000000000867361737988403547205962240695953369140625000Ei", 0,
           1152921504606846977);
    QTY_OK("1.000000000000000000867361737988403547205962240695953369140624Ei", 0,
           1152921504606846977);
    QTY_OK("1.000000000000000000867361737988403547205962240695953369140626Ei", 0,
           1152921504606846978);
    QTY_OK("-1.000000000000000000867361737988403547205962240695953369140626Ei", 0,
           -1152921504606846977);

    /* 5000 digits: 0.000...0001 and 0.000...000. */
    char buf[5010];
    buf[0] = '0';
    buf[1] = '.';
    memset(buf + 2, '0', 4999);
    buf[5001] = '1';
    buf[5002] = '\0';
    QTY_OK(buf, 0, 1);
    QTY_OK(buf, 3, 1);
    buf[5001] = '0';
    QTY_OK(buf, 3, 0);
}

static void test_negative(void)
{
    QTY_OK("-1", 0, -1);
    QTY_OK("-1", 3, -1000);
    QTY_OK("-1.5", 0, -1);         /* ceil, toward +infinity */
    QTY_OK("-1.5", 3, -1500);
    QTY_OK("-0.5", 0, 0);
    QTY_OK("-100m", 0, 0);
    QTY_OK("-100m", 3, -100);
    QTY_OK("-1.5n", 9, -1);
    QTY_OK("-1Ki", 0, -1024);
    QTY_OK("-1.1Ki", 0, -1126);    /* -1126.4 up */
    QTY_OK("-1.5Gi", 0, -1610612736);
    QTY_OK("-1e3", 0, -1000);
    QTY_OK("-8Ei", 0, INT64_MIN);  /* -2^63 is representable */
    QTY_OK("-9223372036854775808", 0, INT64_MIN);
    QTY_OK("-9223372036854775808.9", 0, INT64_MIN);
    QTY_TOO_LARGE("-9223372036854775809", 0);
    QTY_TOO_LARGE("-8.0000000001Ei", 0);
}

static void test_overflow(void)
{
    QTY_TOO_LARGE("8Ei", 0);
    QTY_TOO_LARGE("1Ei", 3);
    QTY_TOO_LARGE("9Pi", 3);
    QTY_TOO_LARGE("10E", 0);
    QTY_TOO_LARGE("9.223372036854775808E", 0);
    QTY_TOO_LARGE("9223372036854775808", 0);
    QTY_TOO_LARGE("9223372036854775807.1", 0);  /* rounds up to 2^63 */
    QTY_TOO_LARGE("9223372036854775807", 3);
    QTY_TOO_LARGE("9223372036854776", 3);
    QTY_TOO_LARGE("1e19", 0);
    QTY_TOO_LARGE("1e16", 3);
    QTY_TOO_LARGE("1e99999999999999999999999999", 0);
    QTY_TOO_LARGE("1234567890123456789012345678901234567890", 0);
    QTY_TOO_LARGE("0.0000000001e30", 0);
    QTY_TOO_LARGE("9Gi", 9);

    /* A very long input is named, but cut short. */
    char buf[301];
    memset(buf, '1', 300);
    buf[300] = '\0';
    int64_t v = SENTINEL;
    ls_error e = {{0}};
    CHECK(!ls_quantity_parse(buf, 0, &v, &e));
    CHECK_CONTAINS(e.msg, "quantity \"1111111111");
    CHECK_CONTAINS(e.msg, "...\" is too large");
    CHECK(strlen(e.msg) < 200);
}

static void test_garbage(void)
{
    QTY_GARBAGE("");
    QTY_GARBAGE("abc");
    QTY_GARBAGE(".");
    QTY_GARBAGE("+");
    QTY_GARBAGE("-");
    QTY_GARBAGE("+.");
    QTY_GARBAGE("-.e3");
    QTY_GARBAGE("1.2.3");
    QTY_GARBAGE("1..2");
    QTY_GARBAGE("1.5.Mi");
    QTY_GARBAGE(" 1");
    QTY_GARBAGE("1 ");
    QTY_GARBAGE("1 Ki");
    QTY_GARBAGE("1KiB");
    QTY_GARBAGE("1ki");
    QTY_GARBAGE("1mi");
    QTY_GARBAGE("1K");
    QTY_GARBAGE("1i");
    QTY_GARBAGE("1KiKi");
    QTY_GARBAGE("1Mi2");
    QTY_GARBAGE("1Gb");
    QTY_GARBAGE("1e");
    QTY_GARBAGE("1e+");
    QTY_GARBAGE("1E-");
    QTY_GARBAGE("1e3.5");
    QTY_GARBAGE("1e3x");
    QTY_GARBAGE("1E3E");
    QTY_GARBAGE("1eKi");
    QTY_GARBAGE("1e--3");
    QTY_GARBAGE("e3");
    QTY_GARBAGE("Ki");
    QTY_GARBAGE("++1");
    QTY_GARBAGE("+-1");
    QTY_GARBAGE("1-");
    QTY_GARBAGE("0x10");
    QTY_GARBAGE("1,5");
    QTY_GARBAGE("1_000");
    QTY_GARBAGE("inf");
    QTY_GARBAGE("NaN");
    QTY_GARBAGE("1mm");
    QTY_GARBAGE("1nm");

    /* Control bytes are masked in the message. */
    QTY_FAIL("1\n", 0, "invalid quantity \"1?\": " FORMAT_HELP);
    QTY_FAIL("1\t", 0, "invalid quantity \"1?\": " FORMAT_HELP);
    /* NULL reads as the empty string. */
    int64_t v = SENTINEL;
    ls_error e = {{0}};
    CHECK(!ls_quantity_parse(NULL, 0, &v, &e));
    CHECK_STR(e.msg, "invalid quantity \"\": " FORMAT_HELP);
    /* A NULL error is allowed. */
    CHECK(!ls_quantity_parse("abc", 0, &v, NULL));
    CHECK(ls_quantity_parse("1Ki", 0, &v, NULL));
    CHECK_INT(v, 1024);
}

static void test_time(void)
{
    const int64_t s = 1000000000;
    TIME_OK("1970-01-01T00:00:00Z", 0);
    TIME_OK("2024-01-02T15:04:05Z", 1704207845 * s);
    TIME_OK("2024-01-02T15:04:05.5Z", 1704207845 * s + 500000000);
    TIME_OK("2024-01-02T15:04:05.123456Z", 1704207845 * s + 123456000);
    TIME_OK("2024-01-02T15:04:05.123456789Z", 1704207845 * s + 123456789);
    TIME_OK("2024-01-02T15:04:05.1234567899Z", 1704207845 * s + 123456789);  /* truncated */
    TIME_OK("2024-01-02T15:04:05.000000000Z", 1704207845 * s);
    TIME_OK("2024-01-02T17:04:05+02:00", 1704207845 * s);
    TIME_OK("2024-01-02T10:04:05-05:00", 1704207845 * s);
    TIME_OK("2024-01-02T20:34:05.25+05:30", 1704207845 * s + 250000000);
    TIME_OK("2024-01-02T15:04:05+00:00", 1704207845 * s);
    TIME_OK("2024-01-02T15:04:05-00:00", 1704207845 * s);
    TIME_OK("2024-01-02T00:30:00+01:00", 1704151800 * s);  /* previous UTC day */
    TIME_OK("2023-12-31T23:00:00-01:00", 1704067200 * s);  /* next UTC year */
    TIME_OK("2000-02-29T00:00:00Z", 951782400 * s);
    TIME_OK("2024-02-29T12:00:00Z", 1709208000 * s);
    TIME_OK("1969-12-31T23:59:59Z", -s);
    TIME_OK("1969-12-31T23:59:59.5Z", -500000000);
    TIME_OK("2262-04-11T23:47:16.854775807Z", INT64_MAX);
    TIME_OK("1677-09-21T00:12:43.145224192Z", INT64_MIN);

    TIME_BAD(NULL);
    TIME_BAD("");
    TIME_BAD("2024-01-02");
    TIME_BAD("2024-01-02T15:04:05");         /* no zone */
    TIME_BAD("2024-01-02 15:04:05Z");
    TIME_BAD("2024-01-02t15:04:05z");
    TIME_BAD("2024-1-02T15:04:05Z");
    TIME_BAD("24-01-02T15:04:05Z");
    TIME_BAD("abcd-01-02T15:04:05Z");
    TIME_BAD("+2024-01-02T15:04:05Z");
    TIME_BAD("2024-00-02T15:04:05Z");
    TIME_BAD("2024-13-02T15:04:05Z");
    TIME_BAD("2024-01-00T15:04:05Z");
    TIME_BAD("2024-01-32T15:04:05Z");
    TIME_BAD("2024-04-31T15:04:05Z");
    TIME_BAD("2024-02-30T15:04:05Z");
    TIME_BAD("2023-02-29T15:04:05Z");
    TIME_BAD("2100-02-29T15:04:05Z");
    TIME_BAD("2024-01-02T24:00:00Z");
    TIME_BAD("2024-01-02T15:60:05Z");
    TIME_BAD("2024-01-02T15:04:60Z");
    TIME_BAD("2024-01-02T15:04Z");
    TIME_BAD("2024-01-02T15:04:05.Z");
    TIME_BAD("2024-01-02T15:04:05.5");
    TIME_BAD("2024-01-02T15:04:05+0200");
    TIME_BAD("2024-01-02T15:04:05-0700");
    TIME_BAD("2024-01-02T15:04:05+2:00");
    TIME_BAD("2024-01-02T15:04:05+24:00");
    TIME_BAD("2024-01-02T15:04:05+02:60");
    TIME_BAD("2024-01-02T15:04:05+02");
    TIME_BAD("2024-01-02T15:04:05Zjunk");
    TIME_BAD("2024-01-02T15:04:05Z ");
    TIME_BAD(" 2024-01-02T15:04:05Z");
    TIME_BAD("2024-01-02T15:04:05+02:00 ");
    TIME_BAD("2262-04-11T23:47:16.854775808Z");  /* past int64 nanoseconds */
    TIME_BAD("1677-09-21T00:12:43.145224191Z");
    TIME_BAD("9999-12-31T23:59:59Z");
}

int main(void)
{
    test_plain_numbers();
    test_decimal_suffixes();
    test_binary_suffixes();
    test_exponents();
    test_many_digits();
    test_negative();
    test_overflow();
    test_garbage();
    test_time();
    TEST_MAIN_END();
}
