/* semver.c -- see semver.h. */
#include "semver.h"

#include <stdio.h>
#include <string.h>

typedef struct ver {
    unsigned long long v[3];
    const char *pre;   /* into the text; length npre, 0: none */
    size_t npre;
} ver;

#define NUM_MAX 9007199254740991ULL /* 2^53 - 1: exact in JSON too */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_ident(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '-';
}

/* A number at *s without leading zeros; advances *s. */
static bool number(unsigned long long *out, const char **s)
{
    const char *p = *s;
    if (!is_digit(*p))
        return false;
    if (*p == '0' && is_digit(p[1]))
        return false;
    unsigned long long n = 0;
    for (; is_digit(*p); p++) {
        n = n * 10 + (unsigned long long)(*p - '0');
        if (n > NUM_MAX)
            return false;
    }
    *out = n;
    *s = p;
    return true;
}

/* Dot-separated non-empty identifiers; numeric ones without leading
** zeros. Returns the length consumed, 0 when malformed. */
static size_t identifiers(const char *s)
{
    const char *p = s;
    for (;;) {
        const char *start = p;
        bool numeric = true;
        for (; is_ident(*p); p++)
            if (!is_digit(*p))
                numeric = false;
        if (p == start || (numeric && *start == '0' && p - start > 1))
            return 0;
        if (*p != '.')
            return (size_t)(p - s);
        p++;
    }
}

static bool parse_ver(ver *out, const char *s)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < 3; i++) {
        if (i && *s++ != '.')
            return false;
        if (!number(&out->v[i], &s))
            return false;
    }
    if (*s == '-') {
        size_t n = identifiers(s + 1);
        if (!n || n > 64)
            return false;
        out->pre = s + 1;
        out->npre = n;
        s += 1 + n;
    }
    return !*s;
}

bool dsf_semver_valid(const char *v)
{
    ver x;
    return strlen(v) <= 64 && parse_ver(&x, v);
}

/* Compares two pre-release strings (both non-empty). */
static int cmp_pre(const char *a, size_t na, const char *b, size_t nb)
{
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        size_t ea = i, eb = j;
        bool da = true, db = true;
        for (; ea < na && a[ea] != '.'; ea++)
            da = da && is_digit(a[ea]);
        for (; eb < nb && b[eb] != '.'; eb++)
            db = db && is_digit(b[eb]);
        size_t la = ea - i, lb = eb - j;
        int c;
        if (da && db)
            c = la != lb ? (la < lb ? -1 : 1) : memcmp(a + i, b + j, la);
        else if (da || db)
            c = da ? -1 : 1; /* numeric identifiers are lower */
        else {
            c = memcmp(a + i, b + j, la < lb ? la : lb);
            if (!c && la != lb)
                c = la < lb ? -1 : 1;
        }
        if (c)
            return c;
        i = ea + (ea < na);
        j = eb + (eb < nb);
    }
    return (i < na) - (j < nb);
}

static int cmp_ver(const ver *a, const ver *b)
{
    for (int i = 0; i < 3; i++)
        if (a->v[i] != b->v[i])
            return a->v[i] < b->v[i] ? -1 : 1;
    if (!a->npre || !b->npre)
        return (a->npre == 0) - (b->npre == 0);
    return cmp_pre(a->pre, a->npre, b->pre, b->npre);
}

int dsf_semver_cmp(const char *a, const char *b)
{
    ver x, y;
    parse_ver(&x, a);
    parse_ver(&y, b);
    return cmp_ver(&x, &y);
}

bool dsf_semreq_parse(dsf_semreq *r, const char *s, size_t *col,
                      const char **why)
{
    memset(r, 0, sizeof *r);
    const char *p = s;
    r->op = '=';
    if (*p == '=' || *p == '^' || *p == '~')
        r->op = *p++;
    for (;;) {
        if (*p == '*' || *p == 'x' || *p == 'X') {
            *why = "wildcards are not supported (use ^ or ~)";
            goto fail;
        }
        if (!number(&r->v[r->n], &p)) {
            *why = is_digit(*p) ? "a number has a leading zero or is too "
                                  "large"
                                : "expected a number";
            goto fail;
        }
        r->n++;
        if (*p != '.' || r->n == 3)
            break;
        p++;
    }
    if (*p == '-' && r->n == 3) {
        size_t n = identifiers(p + 1);
        if (!n || n >= sizeof r->pre) {
            p++;
            *why = "expected a pre-release: dot-separated [0-9A-Za-z-] "
                   "identifiers";
            goto fail;
        }
        memcpy(r->pre, p + 1, n);
        r->pre[n] = '\0';
        p += 1 + n;
    }
    if (*p) {
        *why = *p == '+' ? "build metadata is not allowed"
             : *p == '-' ? "a pre-release needs MAJOR.MINOR.PATCH"
             : *p == '.' ? "at most three numbers"
                         : "unexpected character";
        goto fail;
    }
    return true;
fail:
    *col = (size_t)(p - s) + 1;
    return false;
}

bool dsf_semreq_matches(const dsf_semreq *r, const char *v)
{
    ver x;
    if (!parse_ver(&x, v))
        return false;
    if (x.npre) {
        /* pre-releases only when asked for on the same M.m.p */
        if (!r->pre[0] || r->n < 3 || x.v[0] != r->v[0] ||
            x.v[1] != r->v[1] || x.v[2] != r->v[2])
            return false;
    }
    ver lo = {{r->v[0], r->v[1], r->v[2]}, r->pre[0] ? r->pre : NULL,
              strlen(r->pre)};
    if (r->op == '=' && r->n == 3)
        return cmp_ver(&x, &lo) == 0;
    ver hi = {{0, 0, 0}, NULL, 0};
    int bump; /* which number the exclusive upper bound increments */
    if (r->op == '^')
        bump = r->v[0] || r->n == 1 ? 0 : r->v[1] || r->n == 2 ? 1 : 2;
    else if (r->op == '~')
        bump = r->n == 1 ? 0 : 1;
    else /* '=' with 1 or 2 numbers */
        bump = r->n - 1;
    for (int i = 0; i < bump; i++)
        hi.v[i] = r->v[i];
    hi.v[bump] = r->v[bump] + 1;
    return cmp_ver(&x, &lo) >= 0 && cmp_ver(&x, &hi) < 0;
}
