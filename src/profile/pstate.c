/* pstate.c -- see pstate.h. */
#include "profile/pstate.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "profile/internal.h"

struct dsf_profile_state {
    dsf_host *h;
    const char *mods[DSF_MAX_MODULE_DIRS]; /* the host's module dirs */
    dsf_profile_ctx ctx;                   /* what it was made with */
    bool used;                             /* ran scripts since renewal */
};

int dsf_pstate_new(dsf_profile_state **out, const dsf_profile_ctx *ctx,
                   dsf_diags *d)
{
    *out = NULL;
    dsf_profile_state *s = dsf_xcalloc(1, sizeof *s);
    int rc = dsf_profile_open_host(&s->h, ctx, s->mods, d);
    if (rc) {
        free(s);
        return rc;
    }
    s->ctx = *ctx;
    *out = s;
    return 0;
}

void dsf_pstate_free(dsf_profile_state *s)
{
    if (!s)
        return;
    dsf_host_free(s->h);
    free(s);
}

static bool same_ctx(const dsf_profile_ctx *a, const dsf_profile_ctx *b)
{
    return a->plugin_dirs == b->plugin_dirs && a->sources == b->sources &&
           a->warnings == b->warnings &&
           a->limits.memory == b->limits.memory &&
           a->limits.instructions == b->limits.instructions &&
           a->limits.seconds == b->limits.seconds;
}

int dsf_pstate_host(dsf_host **h, dsf_profile_state **st,
                    const dsf_profile_ctx *ctx, dsf_diags *d)
{
    *h = NULL;
    if (*st && !same_ctx(&(*st)->ctx, ctx)) {
        dsf_pstate_free(*st);
        *st = NULL;
    }
    if (!*st) {
        int rc = dsf_pstate_new(st, ctx, d);
        if (rc)
            return rc;
    } else if ((*st)->used) {
        int rc = dsf_host_renew((*st)->h, d);
        if (rc) {
            dsf_pstate_free(*st);
            *st = NULL;
            return rc;
        }
    }
    (*st)->used = true;
    *h = (*st)->h;
    return 0;
}
