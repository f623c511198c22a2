/*
 * quantity.c: turns the two kinds of scalar text Kubernetes objects carry into
 * integers: resource quantities ("100m", "1.5Gi", "2e3") and RFC 3339
 * timestamps ("2024-01-02T15:04:05.5+02:00").
 *
 * Both are pure functions of their input. No floating point, no locale, no
 * timezone database: a quantity is read as a digit string, a power of ten and a
 * power of two, and reduced to int64 exactly, so the scheduler charges the same
 * bytes and millicores as the API server however many digits a manifest uses.
 */
#include "luasched/model.h"

#include <stdio.h>
#include <string.h>

/* ---- quantities ---------------------------------------------------------- */

/* Any exponent beyond this makes a nonzero value overflow or shrink below the
 * smallest unit, so clamping it keeps the arithmetic in int64 without changing
 * any result. */
#define EXP_CLAMP ((int64_t)1 << 50)

#define TWO_POW_63 ((unsigned __int128)1 << 63)

/* A parsed quantity: value = digits x 10^exp10 x 2^bin, where digits are the
 * integer digits followed by the fraction digits with the dot dropped. */
typedef struct qty {
    bool negative;
    const char *int_digits, *frac_digits;
    int64_t n_int, n_frac;
    int64_t exp10;
    unsigned bin;
} qty;

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int64_t count_digits(const char *p)
{
    int64_t n = 0;
    while (is_digit(p[n]))
        n++;
    return n;
}

/* Digit i of the dot-less digit string; positions past its end are the zeros a
 * positive exponent appends. */
static unsigned digit_at(const qty *q, int64_t i)
{
    if (i < q->n_int)
        return (unsigned)(q->int_digits[i] - '0');
    if (i < q->n_int + q->n_frac)
        return (unsigned)(q->frac_digits[i - q->n_int] - '0');
    return 0;
}

static bool all_zero(const qty *q)
{
    for (int64_t i = 0; i < q->n_int + q->n_frac; i++)
        if (digit_at(q, i) != 0)
            return false;
    return true;
}

/* Sign, integer digits, optional dot and fraction digits. At least one digit
 * is required, so ".", "+" and "-." are rejected rather than read as zero. */
static const char *parse_number(const char *s, qty *q)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        q->negative = *p++ == '-';
    q->int_digits = p;
    q->n_int = count_digits(p);
    p += q->n_int;
    q->frac_digits = p;
    q->n_frac = 0;
    if (*p == '.') {
        q->frac_digits = ++p;
        q->n_frac = count_digits(p);
        p += q->n_frac;
    }
    return q->n_int + q->n_frac > 0 ? p : NULL;
}

/* "e"/"E" then a signed integer, which must run to the end of the string. */
static bool parse_exponent(const char *p, int64_t *exp10)
{
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!is_digit(*p))
        return false;
    int64_t v = 0;
    for (; is_digit(*p); p++)
        if (v < EXP_CLAMP)
            v = v * 10 + (*p - '0');
    if (*p != '\0')
        return false;
    if (v > EXP_CLAMP)
        v = EXP_CLAMP;
    *exp10 = neg ? -v : v;
    return true;
}

static bool parse_suffix(const char *p, qty *q)
{
    static const char binary[] = "KMGTPE";      /* Ki = 2^10 ... Ei = 2^60 */
    static const char decimal[] = "numkMGTPE";  /* n = 10^-9 ... E = 10^18 */
    static const int8_t decimal_exp[] = {-9, -6, -3, 3, 6, 9, 12, 15, 18};

    q->exp10 = 0;
    q->bin = 0;
    if (p[0] == '\0')
        return true;
    if (p[1] == 'i' && p[2] == '\0') {
        const char *b = strchr(binary, p[0]);
        if (!b)
            return false;
        q->bin = 10u * (unsigned)(b - binary + 1);
        return true;
    }
    /* A lone "E" is exa; "E" with anything after it is an exponent. */
    if (p[1] == '\0') {
        const char *d = strchr(decimal, p[0]);
        if (d) {
            q->exp10 = decimal_exp[d - decimal];
            return true;
        }
    }
    if (p[0] == 'e' || p[0] == 'E')
        return parse_exponent(p + 1, &q->exp10);
    return false;
}

/* The integer part: digits [0, split) of the scaled number, or false once it
 * exceeds 2^63, which no multiplier can bring back into range. Only the digits
 * after the first nonzero one count toward that cap, so the loop stops within
 * ~20 steps of it even when split is a huge appended run of zeros. */
static bool integer_part(const qty *q, int64_t split, unsigned __int128 *out)
{
    unsigned __int128 v = 0;
    for (int64_t i = 0; i < split; i++) {
        v = v * 10 + digit_at(q, i);
        if (v > TWO_POW_63)
            return false;
    }
    *out = v;
    return true;
}

/* The fraction part F (digits [split, end) behind -split implicit zeros when
 * split < 0) times 2^bin, as floor plus "a remainder is left". Long
 * multiplication from the least significant digit keeps it exact for any
 * number of digits: the carry stays below 2^bin <= 2^60, so digit * 2^bin +
 * carry < 10 * 2^60 fits in 64 bits. */
static uint64_t fraction_part(const qty *q, int64_t split, bool *inexact)
{
    uint64_t carry = 0;
    *inexact = false;
    int64_t first = split > 0 ? split : 0;
    for (int64_t i = q->n_int + q->n_frac - 1; i >= first; i--) {
        uint64_t x = ((uint64_t)digit_at(q, i) << q->bin) + carry;
        *inexact |= x % 10 != 0;
        carry = x / 10;
    }
    /* Leading zeros of a tiny fraction only shift the carry down; once it is
     * zero the rest of them change nothing. */
    for (int64_t i = split; i < 0 && carry != 0; i++) {
        *inexact |= carry % 10 != 0;
        carry /= 10;
    }
    return carry;
}

/* Copies the input for an error message, bounded and with control bytes
 * replaced, so a bad manifest cannot break the line it is reported on. */
static const char *printable(const char *s, char *buf, size_t size)
{
    size_t n = 0;
    for (; s[n] && n + 4 < size; n++)
        buf[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
    if (s[n]) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

static bool format_error(const char *s, ls_error *err)
{
    char buf[128];
    return ls_errorf(err,
                     "invalid quantity \"%s\": expected a number with an optional suffix "
                     "(Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E) or exponent",
                     printable(s, buf, sizeof buf));
}

static bool range_error(const char *s, ls_error *err)
{
    char buf[128];
    return ls_errorf(err, "quantity \"%s\" is too large", printable(s, buf, sizeof buf));
}

bool ls_quantity_parse(const char *s, int scale, int64_t *out, ls_error *err)
{
    if (!s)
        s = "";
    qty q = {0};
    const char *rest = parse_number(s, &q);
    if (!rest || !parse_suffix(rest, &q))
        return format_error(s, err);
    if (all_zero(&q)) {
        *out = 0;
        return true;
    }

    /* Digits [0, split) are the integer part of value x 10^scale. */
    int64_t split = q.n_int + q.exp10 + scale;
    unsigned __int128 ipart;
    if (!integer_part(&q, split, &ipart))
        return range_error(s, err);
    bool inexact;
    uint64_t fpart = fraction_part(&q, split, &inexact);
    unsigned __int128 floor_mag = (ipart << q.bin) + fpart;

    /* Round toward +infinity: up for positives, toward zero for negatives. */
    if (q.negative) {
        if (floor_mag > TWO_POW_63)
            return range_error(s, err);
        *out = floor_mag == TWO_POW_63 ? INT64_MIN : -(int64_t)floor_mag;
    } else {
        unsigned __int128 ceil_mag = floor_mag + (inexact ? 1 : 0);
        if (ceil_mag > (unsigned __int128)INT64_MAX)
            return range_error(s, err);
        *out = (int64_t)ceil_mag;
    }
    return true;
}

/* ---- timestamps ---------------------------------------------------------- */

/* Reads exactly n digits. */
static bool fixed_digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit((*p)[i]))
            return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return true;
}

static bool expect(const char **p, char c)
{
    if (**p != c)
        return false;
    (*p)++;
    return true;
}

static bool is_leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int y, int m)
{
    static const int8_t days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* Days since 1970-01-01 of a proleptic Gregorian date. Counting from March
 * puts the leap day last in the year, so every year's day-of-year formula is
 * the same and 400-year eras repeat exactly. */
static int64_t days_from_civil(int y, int m, int d)
{
    int64_t year = m <= 2 ? y - 1 : y;
    int64_t era = (year >= 0 ? year : year - 399) / 400;
    int64_t year_of_era = year - era * 400;
    int64_t month_from_march = m > 2 ? m - 3 : m + 9;
    int64_t day_of_year = (153 * month_from_march + 2) / 5 + d - 1;
    int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return era * 146097 + day_of_era - 719468;
}

/* "YYYY-MM-DDTHH:MM:SS" as seconds since the epoch, in the written zone. */
static bool parse_date_time(const char **p, int64_t *secs)
{
    int y, mo, d, h, mi, s;
    if (!fixed_digits(p, 4, &y) || !expect(p, '-') || !fixed_digits(p, 2, &mo) ||
        !expect(p, '-') || !fixed_digits(p, 2, &d) || !expect(p, 'T') ||
        !fixed_digits(p, 2, &h) || !expect(p, ':') || !fixed_digits(p, 2, &mi) ||
        !expect(p, ':') || !fixed_digits(p, 2, &s))
        return false;
    /* Leap seconds (:60) are rejected, as the API server's parser does. */
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 59)
        return false;
    *secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
    return true;
}

/* Optional ".digits"; digits past nanoseconds are dropped, not rounded, so a
 * timestamp never moves into the next second. */
static bool parse_fraction(const char **p, int64_t *ns)
{
    *ns = 0;
    if (**p != '.')
        return true;
    (*p)++;
    if (!is_digit(**p))
        return false;
    int64_t unit = 100000000;
    for (; is_digit(**p); (*p)++, unit /= 10)
        *ns += (**p - '0') * unit;
    return true;
}

/* "Z" or "+HH:MM" / "-HH:MM", as seconds east of UTC. */
static bool parse_offset(const char **p, int64_t *offset)
{
    if (expect(p, 'Z')) {
        *offset = 0;
        return true;
    }
    char sign = **p;
    if (sign != '+' && sign != '-')
        return false;
    (*p)++;
    int h, m;
    if (!fixed_digits(p, 2, &h) || !expect(p, ':') || !fixed_digits(p, 2, &m) || h > 23 || m > 59)
        return false;
    *offset = (sign == '-' ? -1 : 1) * (h * 3600 + m * 60);
    return true;
}

bool ls_time_parse(const char *s, int64_t *unix_ns)
{
    if (!s)
        return false;
    const char *p = s;
    int64_t secs, frac, offset;
    if (!parse_date_time(&p, &secs) || !parse_fraction(&p, &frac) ||
        !parse_offset(&p, &offset) || *p != '\0')
        return false;
    /* int64 nanoseconds only reach years 1677..2262. Summed in 128 bits because
     * the earliest instant is a whole second below INT64_MIN plus a fraction. */
    __int128 ns = (__int128)(secs - offset) * 1000000000 + frac;
    if (ns < INT64_MIN || ns > INT64_MAX)
        return false;
    *unix_ns = (int64_t)ns;
    return true;
}

bool ls_quantity_value(const char *text, int32_t scale, int64_t *out)
{
    ls_error err;
    *out = 0;
    return text && scale >= 0 && scale <= 9 && ls_quantity_parse(text, scale, out, &err);
}
