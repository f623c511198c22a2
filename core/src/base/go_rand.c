/*
 * go_rand.c: Go's math/rand, draw for draw (see go_rand.h). Written from the
 * algorithm Go documents in math/rand (rng.go, rand.go, gen_cooked.go):
 *
 * - The source keeps 607 words and two indices; a draw steps both indices
 *   down (mod 607) and adds the word at `tap` into the word at `feed`.
 *   Read as one sequence s, s[n] = s[n-607] + s[n-273] (mod 2^64), and s[n]
 *   sits in word (333 - n) mod 607.
 * - Seed(seed) takes seed mod 2^31-1 (89482311 for 0), runs the Park-Miller
 *   generator x = 48271 x mod 2^31-1 twenty times, then fills each word with
 *   three more of its values (shifted 40, 20, 0) XOR rngCooked[word].
 * - rngCooked is the state of the recurrence after 7.8e12 draws from
 *   srand(1) (the same Park-Miller fill, shifted 20, 10, 0). Go ships it as a
 *   table; we compute it at first use by jumping ahead: with
 *   P(x) = x^607 - x^334 - 1 and x^N mod P = sum c[i] x^i,
 *   s[N] = sum c[i] s[i], the recurrence being linear over Z/2^64.
 *   43 squarings of degree-606 polynomials: a few milliseconds.
 *   spec/core/base/test_go_rand.c checks entries of the table and draws
 *   against values printed by Go itself.
 */
#include "base/go_rand.h"

#include <pthread.h>
#include <string.h>

#define LEN LS_GO_RAND_LEN
#define TAP 273
#define INT32MAX 2147483647
#define COOKED_STEPS 7800000000000ULL   /* gen_cooked.go: 7.8e12 calls */

/* ---- the cooked table */

static uint64_t cooked[LEN];
static pthread_once_t cooked_once = PTHREAD_ONCE_INIT;

/* x[n+1] = 48271 x[n] mod (2^31 - 1), Schrage's method as Go writes it. */
static int32_t seedrand(int32_t x)
{
    const int32_t a = 48271, q = 44488, r = 3399;
    int32_t hi = x / q, lo = x % q;
    x = a * lo - r * hi;
    if (x < 0)
        x += INT32MAX;
    return x;
}

/* out[i] = x^(2k) or x^(2k+1) mod P, from a = x^k mod P: tmp holds the product. */
static void reduce(uint64_t *tmp, int top, uint64_t *out)
{
    for (int k = top; k >= LEN; k--) {   /* x^k = x^(k-273) + x^(k-607) */
        uint64_t c = tmp[k];
        tmp[k - TAP] += c;
        tmp[k - LEN] += c;
    }
    memcpy(out, tmp, LEN * sizeof *out);
}

static void square_mod(uint64_t *a)
{
    static uint64_t tmp[2 * LEN - 1];   /* used under cooked_once only */
    memset(tmp, 0, sizeof tmp);
    for (int i = 0; i < LEN; i++) {
        if (!a[i])
            continue;
        tmp[2 * i] += a[i] * a[i];
        uint64_t twice = 2 * a[i];
        for (int j = i + 1; j < LEN; j++)
            tmp[i + j] += twice * a[j];
    }
    reduce(tmp, 2 * LEN - 2, a);
}

static void times_x_mod(uint64_t *a)
{
    uint64_t top = a[LEN - 1];   /* x^607 = x^334 + 1 */
    memmove(a + 1, a, (LEN - 1) * sizeof *a);
    a[0] = top;
    a[LEN - TAP] += top;
}

/* gen_cooked.go's srand(1), as the sequence s[0..606]. */
static void srand_one(uint64_t *s)
{
    uint64_t vec[LEN];
    int32_t x = 1;
    for (int i = -20; i < LEN; i++) {
        x = seedrand(x);
        if (i >= 0) {
            uint64_t u = (uint64_t)(int64_t)x << 20;
            x = seedrand(x);
            u ^= (uint64_t)(int64_t)x << 10;
            x = seedrand(x);
            u ^= (uint64_t)(int64_t)x;
            vec[i] = u;
        }
    }
    for (int n = 0; n < LEN; n++)
        s[n] = vec[((333 - n) % LEN + LEN) % LEN];
}

static void compute_cooked(void)
{
    uint64_t s[LEN], c[LEN] = {1};   /* c: x^0 */
    srand_one(s);
    int bit = 63;
    while (!((COOKED_STEPS >> bit) & 1))
        bit--;
    for (; bit >= 0; bit--) {
        square_mod(c);
        if ((COOKED_STEPS >> bit) & 1)
            times_x_mod(c);
    }
    /* s[N + j], j = 0..606: the state after N draws; s[n] sits in word (333 - n) mod 607. */
    for (uint64_t j = 0; j < LEN; j++) {
        uint64_t v = 0;
        for (int i = 0; i < LEN; i++)
            v += c[i] * s[i];
        uint64_t n = COOKED_STEPS + j;
        cooked[(333 + LEN - n % LEN) % LEN] = v;
        times_x_mod(c);
    }
}

uint64_t ls_go_rand_cooked(int i)
{
    pthread_once(&cooked_once, compute_cooked);
    return cooked[i];
}

/* ---- the source and the draws of Rand */

void ls_go_rand_seed(ls_go_rand *r, int64_t seed)
{
    pthread_once(&cooked_once, compute_cooked);
    r->tap = 0;
    r->feed = LEN - TAP;
    seed %= INT32MAX;
    if (seed < 0)
        seed += INT32MAX;
    if (seed == 0)
        seed = 89482311;
    int32_t x = (int32_t)seed;
    for (int i = -20; i < LEN; i++) {
        x = seedrand(x);
        if (i >= 0) {
            uint64_t u = (uint64_t)(int64_t)x << 40;
            x = seedrand(x);
            u ^= (uint64_t)(int64_t)x << 20;
            x = seedrand(x);
            u ^= (uint64_t)(int64_t)x;
            r->vec[i] = u ^ cooked[i];
        }
    }
}

static uint64_t next_word(ls_go_rand *r)
{
    if (--r->tap < 0)
        r->tap += LEN;
    if (--r->feed < 0)
        r->feed += LEN;
    uint64_t x = r->vec[r->feed] + r->vec[r->tap];
    r->vec[r->feed] = x;
    return x;
}

int64_t ls_go_rand_int63(ls_go_rand *r)
{
    return (int64_t)(next_word(r) & (((uint64_t)1 << 63) - 1));
}

double ls_go_rand_float64(ls_go_rand *r)
{
    for (;;) {
        double f = (double)ls_go_rand_int63(r) / 9223372036854775808.0;   /* 2^63 */
        if (f != 1.0)
            return f;
    }
}

static int32_t int31(ls_go_rand *r)
{
    return (int32_t)(ls_go_rand_int63(r) >> 32);
}

static uint32_t uint32_draw(ls_go_rand *r)
{
    return (uint32_t)(ls_go_rand_int63(r) >> 31);
}

int32_t ls_go_rand_int31n(ls_go_rand *r, int32_t n)
{
    if ((n & (n - 1)) == 0)
        return int31(r) & (n - 1);
    int32_t max = (int32_t)(INT32MAX - ((uint32_t)1 << 31) % (uint32_t)n);
    int32_t v = int31(r);
    while (v > max)
        v = int31(r);
    return v % n;
}

int64_t ls_go_rand_int63n(ls_go_rand *r, int64_t n)
{
    if ((n & (n - 1)) == 0)
        return ls_go_rand_int63(r) & (n - 1);
    int64_t max = (int64_t)((((uint64_t)1 << 63) - 1) - ((uint64_t)1 << 63) % (uint64_t)n);
    int64_t v = ls_go_rand_int63(r);
    while (v > max)
        v = ls_go_rand_int63(r);
    return v % n;
}

int64_t ls_go_rand_intn(ls_go_rand *r, int64_t n)
{
    if (n <= INT32MAX)
        return ls_go_rand_int31n(r, (int32_t)n);
    return ls_go_rand_int63n(r, n);
}

/* The unexported int31n of Shuffle (Lemire's multiply-shift with rejection). */
static int32_t int31n_lemire(ls_go_rand *r, int32_t n)
{
    uint32_t v = uint32_draw(r);
    uint64_t prod = (uint64_t)v * (uint64_t)n;
    uint32_t low = (uint32_t)prod;
    if (low < (uint32_t)n) {
        uint32_t thresh = (uint32_t)-n % (uint32_t)n;
        while (low < thresh) {
            v = uint32_draw(r);
            prod = (uint64_t)v * (uint64_t)n;
            low = (uint32_t)prod;
        }
    }
    return (int32_t)(prod >> 32);
}

void ls_go_rand_shuffle(ls_go_rand *r, size_t n, void (*swap)(void *ctx, size_t i, size_t j), void *ctx)
{
    if (n < 2)
        return;
    size_t i = n - 1;
    for (; i > (size_t)INT32MAX - 1; i--)
        swap(ctx, i, (size_t)ls_go_rand_int63n(r, (int64_t)i + 1));
    for (; i > 0; i--)
        swap(ctx, i, (size_t)int31n_lemire(r, (int32_t)(i + 1)));
}

void ls_go_rand_perm(ls_go_rand *r, uint32_t n, uint32_t *out)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = (uint32_t)ls_go_rand_intn(r, (int64_t)i + 1);
        out[i] = out[j];
        out[j] = i;
    }
}
