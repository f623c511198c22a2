/*
 * go_rand.h: a generator whose draws are Go's math/rand (go_rand.c), value for
 * value, for the same seed: rand.New(rand.NewSource(seed)), or the package's
 * functions after rand.Seed(seed). The FGD paper's simulator draws its
 * workload's order, sampled copies and node names from it, so a trace built
 * with these draws is the simulator's run for that seed.
 *
 * Go's source (rngSource) is an additive lagged Fibonacci generator,
 * x[n] = x[n-607] + x[n-273] mod 2^64, whose seeding XORs a Park-Miller
 * sequence with a table, rngCooked: the state of the same recurrence 7.8e12
 * steps after srand(1). The table is not copied here: go_rand.c computes it
 * by jumping ahead (see there).
 */
#ifndef LS_GO_RAND_H
#define LS_GO_RAND_H

#include <stddef.h>
#include <stdint.h>

#define LS_GO_RAND_LEN 607

typedef struct ls_go_rand {
    int tap, feed;
    uint64_t vec[LS_GO_RAND_LEN];
} ls_go_rand;

/* rngSource.Seed(seed). */
void ls_go_rand_seed(ls_go_rand *r, int64_t seed);
/* Rand.Int63 (and Rand.Int on 64 bits). */
int64_t ls_go_rand_int63(ls_go_rand *r);
/* Rand.Float64: Int63 / 2^63, drawn again when that rounds to 1. */
double ls_go_rand_float64(ls_go_rand *r);
/* Rand.Int31n: rejection above the largest multiple of n; n > 0. */
int32_t ls_go_rand_int31n(ls_go_rand *r, int32_t n);
/* Rand.Int63n; n > 0. */
int64_t ls_go_rand_int63n(ls_go_rand *r, int64_t n);
/* Rand.Intn: Int31n below 2^31, else Int63n; n > 0. */
int64_t ls_go_rand_intn(ls_go_rand *r, int64_t n);
/* Rand.Shuffle: i from n-1 down to 1 swaps i with j drawn in [0, i] (the
 * unexported int31n, Lemire's multiply-shift, below 2^31). */
void ls_go_rand_shuffle(ls_go_rand *r, size_t n, void (*swap)(void *ctx, size_t i, size_t j), void *ctx);
/* Rand.Perm(n) into out[0..n-1]: out[i] = m[i] of Go's inside-out loop. */
void ls_go_rand_perm(ls_go_rand *r, uint32_t n, uint32_t *out);
/* Go's rngCooked[i] (computed once, then kept): for the tests. */
uint64_t ls_go_rand_cooked(int i);

#endif
