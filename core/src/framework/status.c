/*
 * status.c: the registry of statuses. A status (code plus reasons) is
 * registered once and referred to by a small integer id in the hot loops;
 * identical statuses share one id. Id 0 is Success.
 */
#include "luasched/framework.h"
#include "luasched/map.h"

#include <stdlib.h>
#include <string.h>

static struct {
    ls_status_info *items;
    uint32_t len, cap;
    ls_map by_key;       /* interned "code\x1freasons" -> id + 1 */
    ls_map details;      /* id -> char *: how an Error came about (the plugin frames of its traceback) */
} registry;

static void registry_init(void)
{
    if (registry.items)
        return;
    registry.cap = 64;
    registry.items = ls_xcalloc(registry.cap, sizeof *registry.items);
    registry.items[0].code = LS_SUCCESS;
    registry.items[0].message = ls_xstrdup("");
    registry.len = 1;
    ls_map_init(&registry.by_key);
    ls_map_init(&registry.details);
}

static void split_reasons(ls_status_info *st, const char *reasons, size_t len)
{
    if (len == 0) {
        /* no text, no reasons: upstream's NewStatus(code) has an empty Reasons() */
        st->message = ls_xstrdup("");
        return;
    }
    uint32_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += reasons[i] == '\n';
    st->reasons = ls_xcalloc(n, sizeof *st->reasons);
    char *message = ls_xmalloc(len + 2 * n + 1);
    size_t out = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && reasons[i] != '\n')
            continue;
        size_t rl = i - start;
        char *r = ls_xstrndup(reasons + start, rl);
        st->reasons[st->n_reasons++] = r;
        if (out) {
            memcpy(message + out, ", ", 2);
            out += 2;
        }
        memcpy(message + out, r, rl);
        out += rl;
        start = i + 1;
    }
    message[out] = '\0';
    st->message = message;
}

static uint32_t register_locked(uint8_t code, const char *reasons, size_t len);

uint32_t ls_status_register(uint8_t code, const char *reasons, size_t len)
{
    ls_critical_enter();
    uint32_t id = register_locked(code, reasons, len);
    ls_critical_leave();
    return id;
}

/* Statuses are kept for good: a plugin's message of millions of newlines
 * became millions of reasons (2 GB). A status keeps its first
 * LS_STATUS_MAX_REASONS reasons and LS_STATUS_MAX_TEXT bytes of text. */
static size_t capped_length(const char *reasons, size_t len)
{
    if (len > LS_STATUS_MAX_TEXT)
        len = LS_STATUS_MAX_TEXT;
    uint32_t lines = 1;
    for (size_t i = 0; i < len; i++)
        if (reasons[i] == '\n' && ++lines > LS_STATUS_MAX_REASONS)
            return i;
    return len;
}

static uint32_t register_locked(uint8_t code, const char *reasons, size_t len)
{
    registry_init();
    if (code == LS_SUCCESS)
        return 0;
    len = capped_length(reasons, len);
    char *key = ls_xmalloc(len + 2);
    key[0] = (char)('0' + code);
    memcpy(key + 1, reasons, len);
    /* hidden: no profile reads another's status text by walking string ids */
    ls_str key_id = ls_intern_hidden(key, len + 1);
    free(key);
    uintptr_t known = (uintptr_t)ls_map_get(&registry.by_key, key_id);
    if (known)
        return (uint32_t)(known - 1);
    if (registry.len == registry.cap) {
        registry.cap *= 2;
        registry.items = ls_xrealloc(registry.items, registry.cap * sizeof *registry.items);
    }
    ls_status_info *st = &registry.items[registry.len];
    memset(st, 0, sizeof *st);
    st->code = code;
    split_reasons(st, reasons, len);
    ls_map_put(&registry.by_key, key_id, (void *)(uintptr_t)(registry.len + 1));
    return registry.len++;
}

const ls_status_info *ls_status_get(uint32_t id)
{
    registry_init();
    return id < registry.len ? &registry.items[id] : &registry.items[0];
}

void ls_status_reset(void)
{
    for (uint32_t i = 0; i < registry.len; i++) {
        for (uint32_t k = 0; k < registry.items[i].n_reasons; k++)
            free((void *)registry.items[i].reasons[k]);
        free((void *)registry.items[i].reasons);
        free((void *)registry.items[i].message);
    }
    free(registry.items);
    ls_map_free(&registry.by_key);
    ls_map_free_values(&registry.details, free);
    memset(&registry, 0, sizeof registry);
}

const char *ls_code_name(uint8_t code)
{
    static const char *names[] = {"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable",
                                  "Wait", "Skip", "Pending"};
    return code < sizeof names / sizeof names[0] ? names[code] : "Unknown";
}

bool ls_code_is_rejected(uint8_t code)
{
    return code == LS_UNSCHEDULABLE || code == LS_UNRESOLVABLE || code == LS_PENDING;
}

const char *ls_status_message(uint32_t id)
{
    return ls_status_get(id)->message;
}

void ls_status_set_detail(uint32_t id, const char *text)
{
    ls_critical_enter();
    registry_init();
    char *old = ls_map_get(&registry.details, id);
    ls_map_put(&registry.details, id, text && *text ? ls_xstrdup(text) : NULL);
    ls_critical_leave();
    free(old);
}

const char *ls_status_detail(uint32_t id)
{
    registry_init();
    return ls_map_get(&registry.details, id);
}

const char *ls_status_error_detail(const char *message)
{
    size_t len = strlen(message);
    char *key = ls_xmalloc(len + 2);
    key[0] = (char)('0' + LS_ERROR);
    memcpy(key + 1, message, len);
    ls_str key_id = ls_intern_lookup(key, len + 1);
    free(key);
    uintptr_t known = key_id ? (uintptr_t)ls_map_get(&registry.by_key, key_id) : 0;
    return known ? ls_status_detail((uint32_t)(known - 1)) : NULL;
}
