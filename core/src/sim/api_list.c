/*
 * api_list.c: list with selectors and pagination. A continue token is the
 * base64 of "<resourceVersion of the first page>\n<last key returned>": the
 * next page starts after that key, in the current state (the store keeps no
 * snapshots); a token older than the watch ring is expired (410), as etcd's
 * compaction expires upstream tokens.
 */
#include "sim/api_internal.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char expired_msg[] =
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.";

static char *encode_token(uint64_t rv, const char *key)
{
    size_t n = strlen(key) + 32;
    char *raw = ls_xmalloc(n);
    int len = snprintf(raw, n, "%llu\n%s", (unsigned long long)rv, key);
    char *out = ls_xmalloc(4 * (((size_t)len + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)raw, len);
    free(raw);
    return out;
}

/* false for anything that is not one of our tokens. *key is malloc'd. */
static bool decode_token(const char *tok, uint64_t *rv, char **key)
{
    size_t n = strlen(tok);
    if (n == 0 || n % 4 || n > 8192)
        return false;
    unsigned char *raw = ls_xmalloc(n);
    int len = EVP_DecodeBlock(raw, (const unsigned char *)tok, (int)n);
    if (len <= 0) {
        free(raw);
        return false;
    }
    while (len > 0 && tok[n - 1] == '=' && raw[len - 1] == 0)
        len--, n--;   /* EVP_DecodeBlock counts the padding as zero bytes */
    char *nl = memchr(raw, '\n', (size_t)len);
    char *end;
    bool ok = nl && nl > (char *)raw;
    if (ok) {
        *nl = '\0';
        *rv = strtoull((char *)raw, &end, 10);
        ok = *end == '\0';
    }
    if (ok) {
        size_t klen = (size_t)len - (size_t)(nl + 1 - (char *)raw);
        *key = ls_xstrndup(nl + 1, klen);
    }
    free(raw);
    return ok;
}

static cJSON *list_shell(const ls_api_resource *r, uint64_t rv)
{
    char gv[128], kind[160], rvs[32];
    api_group_version(r, gv, sizeof gv);
    snprintf(kind, sizeof kind, "%sList", r->kind);
    snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)rv);
    cJSON *l = cJSON_CreateObject();
    cJSON_AddStringToObject(l, "kind", kind);
    cJSON_AddStringToObject(l, "apiVersion", gv);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(l, "metadata"), "resourceVersion", rvs);
    cJSON_AddArrayToObject(l, "items");
    return l;
}

/* First index at or after the namespace prefix and strictly after `after`. */
static uint32_t first_index(const api_coll *c, const char *prefix, const char *after)
{
    uint32_t lo = 0, hi = c->len;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        const char *k = c->items[mid]->key;
        bool before = (prefix && strcmp(k, prefix) < 0) || (after && strcmp(k, after) <= 0);
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void fill_page(ls_api *a, const ls_api_resource *r, const char *ns, const api_selector *sel,
                      const char *after, uint32_t limit, uint64_t list_rv, cJSON *list)
{
    api_coll *c = api_coll_of(a, r);
    char prefix[600];
    if (ns && r->namespaced)
        snprintf(prefix, sizeof prefix, "%s/", ns);
    size_t plen = ns && r->namespaced ? strlen(prefix) : 0;
    cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    uint32_t n = 0;
    const char *last = NULL;
    for (uint32_t i = first_index(c, plen ? prefix : NULL, after); i < c->len; i++) {
        const api_obj *o = c->items[i];
        if (plen && strncmp(o->key, prefix, plen) != 0)
            break;
        if (!api_selector_match(sel, o->obj))
            continue;
        if (limit && n == limit) {
            char *tok = encode_token(list_rv, last);
            cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(list, "metadata"), "continue", tok);
            free(tok);
            return;
        }
        cJSON_AddItemToArray(items, cJSON_Duplicate(o->obj, 1));
        last = o->key;
        n++;
    }
}

int ls_api_list(ls_api *a, const ls_api_resource *r, const char *ns, const ls_api_list_opts *o, cJSON **out)
{
    char msg[600];
    api_selector *sel = api_selector_parse(r, o->label_selector, o->field_selector, msg, sizeof msg);
    if (!sel)
        return api_fail(out, 400, "BadRequest", msg);
    char *after = NULL;
    uint64_t token_rv = 0;
    bool has_token = o->continue_token && *o->continue_token;
    if (has_token && !decode_token(o->continue_token, &token_rv, &after)) {
        api_selector_free(sel);
        return api_fail(out, 410, "Expired", "continue key is not valid: the token could not be decoded");
    }
    pthread_mutex_lock(&a->mu);
    int code = 200;
    if (has_token && token_rv < api_oldest_rv(a)) {
        code = api_fail(out, 410, "Expired", expired_msg);
    } else {
        uint64_t list_rv = has_token ? token_rv : a->rv;
        *out = list_shell(r, list_rv);
        fill_page(a, r, ns, sel, after, o->limit, list_rv, *out);
    }
    pthread_mutex_unlock(&a->mu);
    free(after);
    api_selector_free(sel);
    return code;
}
