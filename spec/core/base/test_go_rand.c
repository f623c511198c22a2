/*
 * test_go_rand.c: base/go_rand.c against Go's math/rand itself.
 *
 * How the expected values were obtained: go1.19.8 (Debian's golang-go), a
 * throwaway program outside the repository printing
 *   rand.New(rand.NewSource(seed)).Int63() five times for seeds 0, 1, 42, -7, 51, 1<<40;
 *   for seed 42, Intn(1), Intn(2), Intn(3), Intn(7), Intn(1000), Intn(8152),
 *   Intn(1<<20), Intn(2147483647), Intn(3000000000) in that order (Int31n's
 *   mask and rejection paths, and Int63n's for n >= 2^31);
 *   Perm(10) from a fresh seed 42; Shuffle of 0..9 from a fresh seed 42, then
 *   one more Int63 (Shuffle's Lemire int31n leaves the stream where Go does);
 *   Float64 three times from a fresh seed 42 (printed with %.17g), then Int63.
 * The rngCooked entries are the literals of Go's src/math/rand/rng.go (the
 * table go_rand.c computes by jumping ahead instead of copying): indices 0, 1,
 * 272, 333 and 606 (all 607 were compared once, by a throwaway program).
 */
#include "base/go_rand.h"
#include "test.h"

static void test_cooked_table(void)
{
    CHECK((int64_t)ls_go_rand_cooked(0) == INT64_C(-4181792142133755926));
    CHECK((int64_t)ls_go_rand_cooked(1) == INT64_C(-4576982950128230565));
    CHECK((int64_t)ls_go_rand_cooked(272) == INT64_C(-7161729655835084979));
    CHECK((int64_t)ls_go_rand_cooked(333) == INT64_C(-4633371852008891965));
    CHECK((int64_t)ls_go_rand_cooked(606) == INT64_C(4152330101494654406));
}

static void check_int63(int64_t seed, const int64_t want[5])
{
    ls_go_rand r;
    ls_go_rand_seed(&r, seed);
    for (int i = 0; i < 5; i++) {
        int64_t got = ls_go_rand_int63(&r);
        if (got != want[i])
            fprintf(stderr, "seed %" PRId64 ", draw %d: got %" PRId64 ", Go gives %" PRId64 "\n", seed, i, got, want[i]);
        CHECK(got == want[i]);
    }
}

static void test_int63_streams(void)
{
    check_int63(0, (const int64_t[]){INT64_C(8717895732742165505), INT64_C(2259404117704393152),
                                     INT64_C(6050128673802995827), INT64_C(501233450539197794),
                                     INT64_C(3390393562759376202)});
    check_int63(1, (const int64_t[]){INT64_C(5577006791947779410), INT64_C(8674665223082153551),
                                     INT64_C(6129484611666145821), INT64_C(4037200794235010051),
                                     INT64_C(3916589616287113937)});
    check_int63(42, (const int64_t[]){INT64_C(3440579354231278675), INT64_C(608747136543856411),
                                      INT64_C(5571782338101878760), INT64_C(1926012586526624009),
                                      INT64_C(404153945743547657)});
    check_int63(-7, (const int64_t[]){INT64_C(747107023976529931), INT64_C(7084732931963018726),
                                      INT64_C(6995717851144434728), INT64_C(814608651260322299),
                                      INT64_C(2783162703872624372)});
    check_int63(51, (const int64_t[]){INT64_C(3893522058333705853), INT64_C(6164845938608892732),
                                      INT64_C(3083795589842122694), INT64_C(6360690084447539553),
                                      INT64_C(6800786784483146222)});
    /* seed mod 2^31-1: 1<<40 is 512 there */
    check_int63(INT64_C(1) << 40, (const int64_t[]){INT64_C(5470237361722394362), INT64_C(6322525149314491254),
                                                    INT64_C(1177463506020107830), INT64_C(1565541666764780662),
                                                    INT64_C(7675952003761928004)});
}

static void test_intn(void)
{
    ls_go_rand r;
    ls_go_rand_seed(&r, 42);
    const int64_t n[] = {1, 2, 3, 7, 1000, 8152, 1 << 20, 2147483647, INT64_C(3000000000)};
    const int64_t want[] = {0, 1, 2, 1, 423, 5857, 809893, 825591176, 805492868};
    for (int i = 0; i < 9; i++)
        CHECK_INT(ls_go_rand_intn(&r, n[i]), want[i]);
}

static void test_perm(void)
{
    ls_go_rand r;
    ls_go_rand_seed(&r, 42);
    uint32_t p[10];
    ls_go_rand_perm(&r, 10, p);
    const uint32_t want[10] = {7, 5, 8, 9, 2, 1, 6, 0, 3, 4};
    for (int i = 0; i < 10; i++)
        CHECK_INT(p[i], want[i]);
}

static void test_float64(void)
{
    ls_go_rand r;
    ls_go_rand_seed(&r, 42);
    CHECK(ls_go_rand_float64(&r) == 0.37302836104663262);
    CHECK(ls_go_rand_float64(&r) == 0.06600049679351791);
    CHECK(ls_go_rand_float64(&r) == 0.60409385155864204);
    CHECK(ls_go_rand_int63(&r) == INT64_C(1926012586526624009));   /* one Int63 each */
}

static void swap_ints(void *ctx, size_t i, size_t j)
{
    int *a = ctx, t = a[i];
    a[i] = a[j];
    a[j] = t;
}

static void test_shuffle(void)
{
    ls_go_rand r;
    ls_go_rand_seed(&r, 42);
    int a[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    ls_go_rand_shuffle(&r, 10, swap_ints, a);
    const int want[10] = {2, 5, 7, 9, 6, 8, 1, 4, 0, 3};
    for (int i = 0; i < 10; i++)
        CHECK_INT(a[i], want[i]);
    CHECK(ls_go_rand_int63(&r) == INT64_C(5961769557461764184));
    ls_go_rand_shuffle(&r, 1, swap_ints, a);   /* nothing to draw for one element */
    ls_go_rand_shuffle(&r, 0, swap_ints, a);
    CHECK_INT(a[0], 2);
}

int main(void)
{
    test_cooked_table();
    test_int63_streams();
    test_intn();
    test_perm();
    test_shuffle();
    test_float64();
    TEST_MAIN_END();
}
