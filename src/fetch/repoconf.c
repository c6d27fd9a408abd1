/* repoconf.c -- see repoconf.h. */
#include "repoconf.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/paths.h"
#include "core/xalloc.h"
#include "fetch/index.h"
#include "fetch/repo.h"
#include "json/jsonc.h"
#include "json/jsonout.h"

char *dsf_repoconf_path(bool project, const char *project_dir)
{
    if (project)
        return project_dir ? dsf_path_join(project_dir,
                                           DSF_REPO_PROJECT_FILE)
                           : NULL;
    char *home = dsf_config_home();
    if (!home)
        return NULL;
    char *p = dsf_path_join(home, DSF_REPO_USER_FILE);
    free(home);
    return p;
}

static int bad(const dsf_jsrc *src, const cJSON *node, dsf_diags *d,
               const char *msg)
{
    dsf_jpos pos = {0, 0};
    if (node && !dsf_jsrc_key_pos(src, node, &pos))
        dsf_jsrc_pos(src, node, &pos);
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, dsf_jsrc_file(src), pos.line,
                               pos.col, "%s", msg);
    const char *line;
    size_t len;
    if (pos.line && dsf_jsrc_line(src, pos.line, &line, &len))
        dsf_diag_set_excerpt(g, line, len);
    dsf_diag_set_hint(g, "expected {\"repositories\": {\"NAME\": {\"url\": "
                         "\"https://...\"}}}");
    return DSF_EINPUT;
}

/* Loads file into doc (an empty document when missing). */
/* "keys": the pinned public keys, 64 lower-case hex digits each. */
static int check_keys(const dsf_jsrc *src, const cJSON *keys, dsf_diags *d)
{
    if (!keys)
        return 0;
    if (!cJSON_IsArray(keys) || cJSON_GetArraySize(keys) > 16)
        return bad(src, keys, d, "\"keys\" must be a list of at most 16 "
                   "public keys");
    const cJSON *k;
    cJSON_ArrayForEach(k, keys) {
        bool ok = cJSON_IsString(k) && strlen(k->valuestring) == 64;
        for (const char *c = ok ? k->valuestring : ""; *c; c++)
            if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
                ok = false;
        if (!ok)
            return bad(src, k, d, "a public key is 64 lower-case hex "
                       "digits");
    }
    return 0;
}

static int load_doc(cJSON **doc, dsf_jsrc **src, const char *file,
                    dsf_diags *d)
{
    *doc = NULL;
    *src = NULL;
    if (!dsf_is_file(file))
        return 0;
    int rc = dsf_json_load_file(doc, src, file, d);
    if (rc)
        return rc;
    const cJSON *repos = cJSON_GetObjectItemCaseSensitive(*doc,
                                                          "repositories");
    if (!cJSON_IsObject(*doc))
        rc = bad(*src, *doc, d, "a repository list must be a JSON object");
    else if (repos && !cJSON_IsObject(repos))
        rc = bad(*src, repos, d, "\"repositories\" must be an object");
    for (const cJSON *e = repos && !rc ? repos->child : NULL; e;
         e = e->next) {
        const cJSON *url = cJSON_GetObjectItemCaseSensitive(e, "url");
        if (!dsf_index_name_ok(e->string))
            rc = bad(*src, e, d, "invalid repository name (letters, "
                                 "digits, '_', '-', '.'; at most 64)");
        else if (!cJSON_IsObject(e) || !cJSON_IsString(url))
            rc = bad(*src, e, d, "a repository needs a \"url\" string");
        else if (cJSON_GetObjectItemCaseSensitive(e, "override_plugins") &&
                 !cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(
                     e, "override_plugins")))
            rc = bad(*src, cJSON_GetObjectItemCaseSensitive(
                               e, "override_plugins"),
                     d, "\"override_plugins\" must be true or false");
        else
            rc = check_keys(*src, cJSON_GetObjectItemCaseSensitive(e, "keys"),
                            d);
        if (rc)
            break;
    }
    if (rc) {
        cJSON_Delete(*doc);
        dsf_jsrc_free(*src);
        *doc = NULL;
        *src = NULL;
    }
    return rc;
}

static int cmp_entry(const void *a, const void *b)
{
    const dsf_repoconf_entry *x = a, *y = b;
    if (x->project != y->project)
        return x->project ? -1 : 1;
    return strcmp(x->name, y->name);
}

int dsf_repoconf_load(dsf_repoconf_entry **out, size_t *n,
                      const char *project_dir, dsf_diags *d)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    for (int k = 0; k < 2; k++) {
        bool project = k == 0;
        char *file = dsf_repoconf_path(project, project_dir);
        if (!file)
            continue;
        cJSON *doc;
        dsf_jsrc *src;
        int rc = load_doc(&doc, &src, file, d);
        if (rc) {
            free(file);
            dsf_repoconf_free(*out, *n);
            *out = NULL;
            *n = 0;
            return rc;
        }
        const cJSON *repos = cJSON_GetObjectItemCaseSensitive(doc,
                                                              "repositories");
        for (const cJSON *e = repos ? repos->child : NULL; e; e = e->next) {
            dsf_xgrow((void **)out, &cap, *n + 1, sizeof **out);
            dsf_repoconf_entry *r = &(*out)[(*n)++];
            memset(r, 0, sizeof *r);
            r->name = dsf_xstrdup(e->string);
            r->url = dsf_xstrdup(
                cJSON_GetObjectItemCaseSensitive(e, "url")->valuestring);
            r->file = dsf_xstrdup(file);
            const cJSON *keys = cJSON_GetObjectItemCaseSensitive(e, "keys");
            const cJSON *key;
            r->keys = dsf_xcalloc((size_t)cJSON_GetArraySize(keys) + 1,
                                  sizeof *r->keys);
            cJSON_ArrayForEach(key, keys)
                r->keys[r->n_keys++] = dsf_xstrdup(key->valuestring);
            r->project = project;
            /* Only the project may let a repository replace plugins: a
            ** user-level list applies to every project. */
            r->override_plugins =
                project && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
                               e, "override_plugins"));
            r->shadowed = !project && dsf_repoconf_find(*out, *n - 1,
                                                        r->name);
        }
        cJSON_Delete(doc);
        dsf_jsrc_free(src);
        free(file);
    }
    if (*n)
        qsort(*out, *n, sizeof **out, cmp_entry);
    return 0;
}

const dsf_repoconf_entry *dsf_repoconf_find(const dsf_repoconf_entry *v,
                                            size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!v[i].shadowed && !strcmp(v[i].name, name))
            return &v[i];
    return NULL;
}

int dsf_repoconf_set(const char *file, const char *name, const char *url,
                     const char *const *keys, size_t n_keys, dsf_diags *d)
{
    cJSON *doc;
    dsf_jsrc *src;
    int rc = load_doc(&doc, &src, file, d);
    if (rc)
        return rc;
    dsf_jsrc_free(src);
    if (!doc)
        doc = cJSON_CreateObject();
    cJSON *repos = cJSON_GetObjectItemCaseSensitive(doc, "repositories");
    if (!repos)
        repos = cJSON_AddObjectToObject(doc, "repositories");
    cJSON *e = cJSON_GetObjectItemCaseSensitive(repos, name);
    bool had = e != NULL;
    if (!url)
        cJSON_DeleteItemFromObjectCaseSensitive(repos, name);
    if (url) {
        /* The fields this command sets are replaced; the others (such as
        ** "override_plugins", written by hand) are kept. */
        if (!e)
            e = cJSON_AddObjectToObject(repos, name);
        cJSON_DeleteItemFromObjectCaseSensitive(e, "url");
        cJSON_DeleteItemFromObjectCaseSensitive(e, "keys");
        cJSON_AddStringToObject(e, "url", url);
        if (n_keys) {
            cJSON *a = cJSON_AddArrayToObject(e, "keys");
            for (size_t i = 0; i < n_keys; i++)
                cJSON_AddItemToArray(a, cJSON_CreateString(keys[i]));
        }
    }
    if (!url && !had) {
        cJSON_Delete(doc);
        return 1;
    }
    char *dir = dsf_path_dirname(file);
    rc = dsf_mkdir_p(dir, NULL, d);
    free(dir);
    if (!rc) {
        char *text = dsf_json_print(doc, true);
        rc = dsf_write_atomic(file, text, strlen(text), d);
        free(text);
    }
    cJSON_Delete(doc);
    return rc;
}

void dsf_repoconf_free(dsf_repoconf_entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].url);
        free(v[i].file);
        for (size_t k = 0; k < v[i].n_keys; k++)
            free(v[i].keys[k]);
        free(v[i].keys);
    }
    free(v);
}
