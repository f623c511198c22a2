/*
 * test.h: the C unit-test harness. Each spec/core/<folder>/test_*.c is one executable
 * (one ctest entry); CHECK* macros record failures and keep going so one run
 * shows every broken expectation.
 */
#ifndef LS_TEST_H
#define LS_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int ls_test_failures;
static int ls_test_checks;

#define CHECK(cond)                                                                 \
    do {                                                                            \
        ls_test_checks++;                                                           \
        if (!(cond)) {                                                              \
            ls_test_failures++;                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                           \
    } while (0)

#define CHECK_INT(actual, expected)                                                 \
    do {                                                                            \
        long long a_ = (long long)(actual), e_ = (long long)(expected);             \
        ls_test_checks++;                                                           \
        if (a_ != e_) {                                                             \
            ls_test_failures++;                                                     \
            fprintf(stderr, "%s:%d: %s: got %lld, expected %lld\n", __FILE__,       \
                    __LINE__, #actual, a_, e_);                                     \
        }                                                                           \
    } while (0)

#define CHECK_STR(actual, expected)                                                 \
    do {                                                                            \
        const char *a_ = (actual), *e_ = (expected);                                \
        ls_test_checks++;                                                           \
        if (!a_ || strcmp(a_, e_) != 0) {                                           \
            ls_test_failures++;                                                     \
            fprintf(stderr, "%s:%d: %s: got \"%s\", expected \"%s\"\n", __FILE__,   \
                    __LINE__, #actual, a_ ? a_ : "(null)", e_);                     \
        }                                                                           \
    } while (0)

/* Substring check, for error messages that carry a context prefix. */
#define CHECK_CONTAINS(haystack, needle)                                            \
    do {                                                                            \
        const char *h_ = (haystack), *n_ = (needle);                                \
        ls_test_checks++;                                                           \
        if (!h_ || !strstr(h_, n_)) {                                               \
            ls_test_failures++;                                                     \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__,    \
                    __LINE__, h_ ? h_ : "(null)", n_);                              \
        }                                                                           \
    } while (0)

#define TEST_MAIN_END()                                                             \
    do {                                                                            \
        printf("%d checks, %d failed\n", ls_test_checks, ls_test_failures);         \
        return ls_test_failures ? 1 : 0;                                            \
    } while (0)

#endif
