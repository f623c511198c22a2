/*
 * suggest.c: "did you mean ...?" for a name that is not known: the one rule
 * every error message of a misspelling uses (cluster files' fields, the
 * configuration's plugin names and enum values, the test kit's shorthand).
 *
 * A candidate is close when it is the word in another case, when one is a
 * prefix of the other (at least three letters), or when their edit distance
 * (insertions, deletions, substitutions and swaps of two neighbours, case
 * ignored) is at most a third of the word's length, and at least 1.
 *
 * A misspelt identifier (ls_misspelling_of: a plugin's hook, P:filtr or
 * P:preFilter for P:filter and P:pre_filter) is closer still: case and
 * underscores ignored, one edit at most (none under four letters), and no
 * prefix rule (a plugin's helpers P:bind_claim and P:score_of are no
 * misspelt P:bind and P:score).
 */
#include <ctype.h>
#include <string.h>

#include "luasched/base.h"

enum { MAX_COMPARED = 64 };

static bool prefix_of(const char *a, size_t la, const char *b)
{
    for (size_t i = 0; i < la; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
            return false;
    return true;
}

/* Optimal string alignment distance, case-insensitive; longer words than
 * MAX_COMPARED are not compared (SIZE_MAX). */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAX_COMPARED || lb > MAX_COMPARED)
        return (size_t)-1;
    size_t rows[3][MAX_COMPARED + 1];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        int ca = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= lb; j++) {
            int cb = tolower((unsigned char)b[j - 1]);
            size_t best = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
                prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

const char *ls_did_you_mean(const char *word, const char *const *candidates, size_t n)
{
    if (!word || !*word)
        return NULL;
    size_t lw = strlen(word);
    size_t limit = lw / 3 ? lw / 3 : 1;
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        const char *c = candidates[i];
        if (!c || strcmp(c, word) == 0)
            continue;
        size_t lc = strlen(c);
        size_t d = distance(word, c);
        if (d > limit && lw >= 3 && lc >= 3 && (prefix_of(word, lw < lc ? lw : lc, c)))
            d = limit;   /* "node" for nodeName, "request" for requests */
        if (d <= limit && d < best_d) {
            best = c;
            best_d = d;
        }
    }
    return best;
}

/* `word` lowercased without its underscores into buf (false when too long). */
static bool squeezed(const char *word, char *buf, size_t len)
{
    size_t n = 0;
    for (; *word; word++) {
        if (*word == '_')
            continue;
        if (n + 1 >= len)
            return false;
        buf[n++] = (char)tolower((unsigned char)*word);
    }
    buf[n] = 0;
    return true;
}

const char *ls_misspelling_of(const char *word, const char *const *candidates, size_t n)
{
    char w[MAX_COMPARED + 1], c[MAX_COMPARED + 1];
    if (!word || !*word || !squeezed(word, w, sizeof w))
        return NULL;
    size_t limit = strlen(w) >= 4 ? 1 : 0;
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        if (!candidates[i] || strcmp(candidates[i], word) == 0 || !squeezed(candidates[i], c, sizeof c))
            continue;
        size_t d = distance(w, c);
        if (d <= limit && d < best_d) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}
