/*
 * marks.c: pods marked by a supervised command's supervisor (see marks.h).
 */
#include "worker/marks.h"

#include "luasched/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_MARKS = 64 };

static struct {
    char pod[320];
    char *message;
} marks[MAX_MARKS];
static int n_marks;

void ls_worker_mark_pod(const char *pod, const char *message)
{
    for (int i = 0; i < n_marks; i++)
        if (strcmp(marks[i].pod, pod) == 0)
            return;
    if (n_marks == MAX_MARKS)
        return;
    snprintf(marks[n_marks].pod, sizeof marks[n_marks].pod, "%s", pod);
    marks[n_marks].message = ls_xstrdup(message);
    n_marks++;
}

const char *ls_worker_marked(const char *ns, const char *name)
{
    if (!n_marks)
        return NULL;
    char pod[320];
    snprintf(pod, sizeof pod, "%s/%s", ns ? ns : "", name ? name : "");
    for (int i = 0; i < n_marks; i++)
        if (strcmp(marks[i].pod, pod) == 0)
            return marks[i].message;
    return NULL;
}
