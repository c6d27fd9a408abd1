/* jpath.c -- see jpath.h. */
#include "jpath.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "core/utf8.h"
#include "json/jsonc.h"

static void add_step(dsf_jpath *p, char *key, long index)
{
    p->steps = dsf_xrealloc(p->steps, (p->len + 1) * sizeof *p->steps);
    p->steps[p->len].key = key;
    p->steps[p->len].index = index;
    p->len++;
}

static int perr(dsf_jpath *p, char **err, const char *text, const char *msg)
{
    dsf_jpath_free(p);
    *err = dsf_xasprintf("invalid path '%s': %s", text, msg);
    return -1;
}

int dsf_jpath_parse(dsf_jpath *out, const char *text, char **err)
{
    out->steps = NULL;
    out->len = 0;
    *err = NULL;
    const char *s = text;
    if (!*s)
        return perr(out, err, text, "empty");
    while (*s) {
        if (*s == '[') {
            s++;
            if (*s == '"') {
                const char *q = strchr(s + 1, '"');
                if (!q || q[1] != ']')
                    return perr(out, err, text, "'[\"' without '\"]'");
                add_step(out, dsf_xstrndup(s + 1, (size_t)(q - s - 1)), 0);
                s = q + 2;
            } else {
                char *end;
                if (!isdigit((unsigned char)*s))
                    return perr(out, err, text, "'[' must be followed by "
                                                "an index or a quoted key");
                long idx = strtol(s, &end, 10);
                if (*end != ']' || idx < 0 || idx > 1000000)
                    return perr(out, err, text, "bad array index");
                add_step(out, NULL, idx);
                s = end + 1;
            }
        } else {
            size_t n = strcspn(s, ".[");
            if (!n)
                return perr(out, err, text, "empty key");
            add_step(out, dsf_xstrndup(s, n), 0);
            s += n;
        }
        if (*s == '.') {
            s++;
            if (!*s)
                return perr(out, err, text, "ends with '.'");
        } else if (*s && *s != '[') {
            return perr(out, err, text, "'.' or '[' expected");
        }
    }
    return 0;
}

void dsf_jpath_free(dsf_jpath *p)
{
    for (size_t i = 0; i < p->len; i++)
        free(p->steps[i].key);
    free(p->steps);
    p->steps = NULL;
    p->len = 0;
}

void dsf_jpath_append_key(dsf_buf *out, const char *key)
{
    /* Quoted when the plain form would not read back (or, with '=', would
    ** split an edit in the wrong place). */
    if (strpbrk(key, ".[]\"=") || !*key) {
        dsf_buf_printf(out, "[\"%s\"]", key);
        return;
    }
    if (out->len)
        dsf_buf_putc(out, '.');
    dsf_buf_puts(out, key);
}

void dsf_jpath_format(dsf_buf *out, const dsf_jpath *p, size_t n)
{
    for (size_t i = 0; i < n && i < p->len; i++) {
        if (p->steps[i].key)
            dsf_jpath_append_key(out, p->steps[i].key);
        else
            dsf_buf_printf(out, "[%ld]", p->steps[i].index);
    }
}

static cJSON *child(cJSON *node, const dsf_jstep *st)
{
    if (st->key)
        return cJSON_IsObject(node)
                   ? cJSON_GetObjectItemCaseSensitive(node, st->key)
                   : NULL;
    return cJSON_IsArray(node) ? cJSON_GetArrayItem(node, (int)st->index)
                               : NULL;
}

cJSON *dsf_jpath_get(cJSON *doc, const dsf_jpath *p)
{
    cJSON *n = doc;
    for (size_t i = 0; n && i < p->len; i++)
        n = child(n, &p->steps[i]);
    return n;
}

/* Levels of objects and arrays in v (0 for a scalar or NULL). */
static size_t nesting(const cJSON *v)
{
    size_t deepest = 0;
    for (const cJSON *ch = v && (cJSON_IsObject(v) || cJSON_IsArray(v))
                               ? v->child
                               : NULL;
         ch; ch = ch->next) {
        size_t n = nesting(ch);
        if (n > deepest)
            deepest = n;
    }
    return v && (cJSON_IsObject(v) || cJSON_IsArray(v)) ? deepest + 1 : 0;
}

int dsf_edit_parse(dsf_edit *out, const char *arg, int argno, char **err)
{
    memset(out, 0, sizeof *out);
    *err = NULL;
    size_t bad = dsf_utf8_check(arg, strlen(arg));
    if (bad != strlen(arg)) {
        *err = dsf_xasprintf("invalid UTF-8 (byte 0x%02X at column %zu): "
                             "edits must be UTF-8 text",
                             (unsigned char)arg[bad], bad + 1);
        return -1;
    }
    const char *s = arg;
    if (*s == '+') {
        out->op = DSF_EDIT_ADD;
        s++;
    } else if (*s == '~') {
        out->op = DSF_EDIT_DELETE;
        s++;
    } else {
        out->op = DSF_EDIT_SET;
    }
    const char *eq = strchr(s, '=');
    /* A quoted key may contain '=': look for it after the last '"]'. */
    const char *lastq = strstr(s, "\"]");
    while (lastq && strstr(lastq + 2, "\"]"))
        lastq = strstr(lastq + 2, "\"]");
    if (lastq && eq && eq < lastq)
        eq = strchr(lastq, '=');
    if (out->op == DSF_EDIT_DELETE && eq) {
        *err = dsf_xasprintf("'%s': a delete (~path) takes no value", arg);
        return -1;
    }
    if (out->op != DSF_EDIT_DELETE && !eq) {
        *err = dsf_xasprintf("'%s': expected path=value", arg);
        return -1;
    }
    char *path = eq ? dsf_xstrndup(s, (size_t)(eq - s)) : dsf_xstrdup(s);
    if (dsf_jpath_parse(&out->path, path, err) != 0) {
        free(path);
        return -1;
    }
    /* Provenance records the canonical spelling (["x"].y is x.y). */
    dsf_buf canon = DSF_BUF_INIT;
    dsf_jpath_format(&canon, &out->path, out->path.len);
    free(path);
    out->path_text = dsf_buf_take(&canon);
    out->arg = dsf_xstrdup(arg);
    out->argno = argno;
    if (eq) {
        const char *val = eq + 1;
        dsf_diags ignore = DSF_DIAGS_INIT;
        cJSON *v = NULL;
        bool too_deep = false;
        if (dsf_json_parse(&v, NULL, "value", val, strlen(val), &ignore) != 0) {
            /* Text that is not JSON is a string; JSON nested past the
            ** limit is refused (not taken for a string). */
            too_deep = ignore.len &&
                       !strcmp(ignore.items[0].message, DSF_JSON_DEPTH_MESSAGE);
            v = too_deep ? NULL : cJSON_CreateString(val);
        }
        dsf_diags_free(&ignore);
        if (too_deep) {
            *err = dsf_xasprintf("'%.60s%s': the value nests more than %d "
                                 "levels deep; a config nests at most %d",
                                 arg, strlen(arg) > 60 ? "..." : "",
                                 DSF_JSON_MAX_DEPTH, DSF_JPATH_MAX_DEPTH);
            dsf_edit_free(out);
            memset(out, 0, sizeof *out);
            return -1;
        }
        if (!v)
            dsf_xoom();
        out->value = v;
    }
    size_t depth = out->path.len + nesting(out->value);
    if (depth > DSF_JPATH_MAX_DEPTH) {
        *err = dsf_xasprintf("'%.60s%s': the edit nests %zu levels deep; a "
                             "config nests at most %d", arg,
                             strlen(arg) > 60 ? "..." : "", depth,
                             DSF_JPATH_MAX_DEPTH);
        dsf_edit_free(out);
        memset(out, 0, sizeof *out);
        return -1;
    }
    return 0;
}

void dsf_edit_free(dsf_edit *e)
{
    dsf_jpath_free(&e->path);
    cJSON_Delete(e->value);
    free(e->path_text);
    free(e->arg);
}

static int eerr(char **err, const dsf_edit *e, size_t upto, const char *msg)
{
    dsf_buf b = DSF_BUF_INIT;
    dsf_jpath_format(&b, &e->path, upto);
    *err = dsf_xasprintf("'%s': %s%s%s", e->arg, msg, b.len ? " at " : "",
                         dsf_buf_str(&b));
    dsf_buf_free(&b);
    return -1;
}

int dsf_edit_apply(cJSON *doc, const dsf_edit *e, cJSON **touched,
                   char **err)
{
    *touched = NULL;
    *err = NULL;
    cJSON *node = doc;
    size_t last = e->path.len - 1;
    /* Walk to the parent, creating objects on the way for set/add. */
    for (size_t i = 0; i < last; i++) {
        const dsf_jstep *st = &e->path.steps[i];
        cJSON *next = child(node, st);
        if (!next) {
            if (e->op == DSF_EDIT_DELETE)
                return eerr(err, e, i + 1, "nothing to delete: no value");
            if (!st->key)
                return eerr(err, e, i + 1, "array index out of range");
            if (!cJSON_IsObject(node))
                return eerr(err, e, i, "the path goes through a non-object "
                                       "value");
            next = cJSON_AddObjectToObject(node, st->key);
            if (!next)
                dsf_xoom();
        }
        node = next;
    }
    const dsf_jstep *st = &e->path.steps[last];
    if (st->key && !cJSON_IsObject(node))
        return eerr(err, e, last, "the path goes through a non-object value");
    if (!st->key && !cJSON_IsArray(node))
        return eerr(err, e, last, "an index needs an array");
    cJSON *existing = child(node, st);
    switch (e->op) {
    case DSF_EDIT_DELETE:
        if (!existing)
            return eerr(err, e, last + 1, "nothing to delete: no value");
        cJSON_DetachItemViaPointer(node, existing);
        cJSON_Delete(existing);
        return 0;
    case DSF_EDIT_ADD:
        if (existing)
            return eerr(err, e, last + 1,
                        "+path adds a new key, but a value exists "
                        "(use path=value to replace it)");
        break;
    case DSF_EDIT_SET:
        break;
    }
    cJSON *v = cJSON_Duplicate(e->value, 1);
    if (!v)
        dsf_xoom();
    if (existing && st->key) {
        /* (ReplaceItemViaPointer would leave the new member without key) */
        cJSON_ReplaceItemInObjectCaseSensitive(node, st->key, v);
    } else if (existing) {
        cJSON_ReplaceItemViaPointer(node, existing, v);
    } else if (st->key) {
        cJSON_AddItemToObject(node, st->key, v);
    } else {
        if (st->index != cJSON_GetArraySize(node)) {
            cJSON_Delete(v);
            return eerr(err, e, last + 1, "array index out of range");
        }
        cJSON_AddItemToArray(node, v);
    }
    *touched = v;
    return 0;
}
