/* opts.c -- see opts.h. */
#include "opts.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/strutil.h"

void dsf_optparse_init(dsf_optparse *p, int argc, char **argv, int first,
                       const char *cmd)
{
    p->argc = argc;
    p->argv = argv;
    p->i = first;
    p->cmd = cmd;
    p->only_positional = false;
    p->arg_index = first;
}

static int usage_error(dsf_optparse *p, dsf_diags *d, const char *problem,
                       const char *what)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "%s '%s'", problem,
                               what);
    dsf_diag_set_hint(g, "try 'dsforge %s --help'", p->cmd);
    return DSF_EUSAGE;
}

/* The closest long option to name[0..n) in both tables, or NULL. */
static const char *closest_long(const char *name, size_t n,
                                const dsf_opt *opts, const dsf_opt *common)
{
    const char *cand[128];
    size_t nc = 0;
    for (int t = 0; t < 2; t++)
        for (const dsf_opt *it = t ? common : opts; it && it->id; it++)
            if (nc < sizeof cand / sizeof *cand)
                cand[nc++] = it->name;
    char word[64];
    if (n >= sizeof word)
        return NULL;
    memcpy(word, name, n);
    word[n] = '\0';
    return dsf_closest(word, cand, nc);
}

static const dsf_opt *find_long(const dsf_opt *opts, const dsf_opt *common,
                                const char *name, size_t n)
{
    for (int t = 0; t < 2; t++)
        for (const dsf_opt *it = t ? common : opts; it && it->id; it++)
            if (strlen(it->name) == n && !strncmp(it->name, name, n))
                return it;
    return NULL;
}

static const dsf_opt *find_short(const dsf_opt *opts, const dsf_opt *common,
                                 char c)
{
    for (int t = 0; t < 2; t++)
        for (const dsf_opt *it = t ? common : opts; it && it->id; it++)
            if (it->short_name && it->short_name == c)
                return it;
    return NULL;
}

int dsf_opt_next(dsf_optparse *p, const dsf_opt *opts, const dsf_opt *common,
                 const char **arg, dsf_diags *d)
{
    *arg = NULL;
    if (p->i >= p->argc)
        return DSF_OPT_END;
    p->arg_index = p->i;
    char *a = p->argv[p->i++];
    if (p->only_positional || a[0] != '-' || !a[1]) {
        *arg = a;
        return DSF_OPT_POS;
    }
    if (!strcmp(a, "--")) {
        p->only_positional = true;
        return dsf_opt_next(p, opts, common, arg, d);
    }
    const dsf_opt *o = NULL;
    const char *inline_val = NULL;
    if (a[1] == '-') {
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t n = eq ? (size_t)(eq - name) : strlen(name);
        o = find_long(opts, common, name, n);
        if (!o) {
            const char *close = closest_long(name, n, opts, common);
            if (!close)
                return usage_error(p, d, "unknown option", a);
            dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                       "unknown option '%s'", a);
            dsf_diag_set_hint(g, "did you mean '--%s'? (try 'dsforge %s "
                                 "--help')", close, p->cmd);
            return DSF_EUSAGE;
        }
        if (eq) {
            if (!o->arg)
                return usage_error(p, d, "option takes no value:",
                                   a);
            inline_val = eq + 1;
        }
    } else {
        o = find_short(opts, common, a[1]);
        if (!o)
            return usage_error(p, d, "unknown option", a);
        if (a[2]) {
            if (!o->arg)
                return usage_error(p, d, "unknown option", a);
            inline_val = a + 2;
        }
    }
    if (o->arg) {
        if (inline_val) {
            *arg = inline_val;
        } else if (p->i < p->argc) {
            *arg = p->argv[p->i++];
        } else {
            return usage_error(p, d, "option needs a value:", a);
        }
    }
    return o->id;
}

int dsf_opt_int(long long *out, const char *s, long long min, long long max,
                const char *opt, dsf_diags *d)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "%s: '%s' is not a whole number between "
                                   "%lld and %lld", opt, s, min, max);
        (void)g;
        return DSF_EUSAGE;
    }
    *out = v;
    return 0;
}

int dsf_opt_double(double *out, const char *s, double min, double max,
                   const char *opt, dsf_diags *d)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= min && v <= max)) {
        dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                     "%s: '%s' is not a number between %g and %g", opt, s,
                     min, max);
        return DSF_EUSAGE;
    }
    *out = v;
    return 0;
}
