/* findings.c -- see findings.h. */
#include "plugin/findings.h"

#include <stdlib.h>
#include <string.h>

#include "core/strutil.h"
#include "core/xalloc.h"

typedef struct dsf_findings_group {
    char *rule;
    char *plugin;
    dsf_severity severity;
    size_t kept, dropped;
    size_t last; /* when kept is the bound: the index (in items) of the
                 ** kept finding that sorts last */
} group;

/* The order that decides which are kept: path, then message (a group's
** findings share their rule). */
static int cmp_kept(const dsf_finding *a, const dsf_finding *b)
{
    int c = strcmp(a->path, b->path);
    return c ? c : strcmp(a->message, b->message);
}

static group *group_of(dsf_findings *f, const char *rule, dsf_severity sev)
{
    /* (a config's findings come from a few dozen rules at most) */
    for (size_t i = 0; i < f->ngroups; i++)
        if (f->groups[i].severity == sev && !strcmp(f->groups[i].rule, rule))
            return &f->groups[i];
    return NULL;
}

static bool in_group(const dsf_finding *x, const group *g)
{
    return !x->more && x->severity == g->severity && !strcmp(x->rule, g->rule);
}

static void find_last(dsf_findings *f, group *g)
{
    size_t last = SIZE_MAX;
    for (size_t i = 0; i < f->len; i++)
        if (in_group(&f->items[i], g) &&
            (last == SIZE_MAX || cmp_kept(&f->items[i], &f->items[last]) > 0))
            last = i;
    g->last = last;
}

static void finding_free(dsf_finding *x)
{
    free(x->rule);
    free(x->plugin);
    free(x->path);
    free(x->message);
    free(x->fix);
    free(x->params);
    free(x->edits);
}

bool dsf_findings_wanted(dsf_findings *f, const char *rule,
                         dsf_severity sev, const char *path)
{
    group *g = group_of(f, rule, sev);
    if (!g || g->kept < DSF_FINDINGS_PER_GROUP)
        return true;
    /* (an equal path may still sort first by its message) */
    if (strcmp(path, f->items[g->last].path) <= 0)
        return true;
    g->dropped++;
    return false;
}

void dsf_findings_put(dsf_findings *f, dsf_finding *x)
{
    group *g = group_of(f, x->rule, x->severity);
    if (!g) {
        dsf_xgrow((void **)&f->groups, &f->capgroups, f->ngroups + 1,
                  sizeof *f->groups);
        g = &f->groups[f->ngroups++];
        *g = (group){dsf_xstrdup(x->rule), dsf_xstrdup(x->plugin),
                     x->severity, 0, 0, SIZE_MAX};
    }
    if (g->kept < DSF_FINDINGS_PER_GROUP) {
        dsf_xgrow((void **)&f->items, &f->cap, f->len + 1, sizeof *f->items);
        f->items[f->len++] = *x;
        if (++g->kept == DSF_FINDINGS_PER_GROUP)
            find_last(f, g);
        return;
    }
    g->dropped++;
    dsf_finding *last = &f->items[g->last];
    if (cmp_kept(x, last) >= 0) {
        finding_free(x);
        return;
    }
    finding_free(last);
    *last = *x;
    find_last(f, g);
}

void dsf_findings_close(dsf_findings *f)
{
    for (size_t i = 0; i < f->ngroups; i++) {
        const group *g = &f->groups[i];
        if (!g->dropped)
            continue;
        char n[32];
        dsf_xgrow((void **)&f->items, &f->cap, f->len + 1, sizeof *f->items);
        f->items[f->len++] = (dsf_finding){
            .rule = dsf_xstrdup(g->rule),
            .plugin = dsf_xstrdup(g->plugin),
            .severity = DSF_NOTE,
            .path = dsf_xstrdup(""),
            .message = dsf_xasprintf(
                "%s more %s%s not shown (at most %u of one rule and "
                "severity per file)",
                dsf_thousands(n, g->dropped), dsf_severity_name(g->severity),
                dsf_plural(g->dropped), DSF_FINDINGS_PER_GROUP),
            .more = g->dropped};
    }
}

void dsf_findings_free(dsf_findings *f)
{
    for (size_t i = 0; i < f->len; i++)
        finding_free(&f->items[i]);
    free(f->items);
    for (size_t i = 0; i < f->ngroups; i++) {
        free(f->groups[i].rule);
        free(f->groups[i].plugin);
    }
    free(f->groups);
    *f = (dsf_findings)DSF_FINDINGS_INIT;
}
