/*
 * test_json.h: JSON for C unit tests, written with single quotes (they read
 * better inside C strings): json("{'kind': 'Pod'}"). A text that does not
 * parse aborts the test with the text.
 */
#ifndef LS_TEST_JSON_H
#define LS_TEST_JSON_H

#include "luasched/base.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

static cJSON *json(const char *text)
{
    char *s = ls_xstrdup(text);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    cJSON *j = cJSON_Parse(s);
    free(s);
    if (!j) {
        fprintf(stderr, "bad test JSON: %s\n", text);
        abort();
    }
    return j;
}

#endif
