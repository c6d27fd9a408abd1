/* jsonalloc.c -- see jsonalloc.h. */
#include "json/jsonalloc.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/xalloc.h"
#include "core/heap.h"

/* The header keeps a block 16-byte aligned, as malloc's are. */
#define HEADER 16u

static int pooled;

static void *pool_malloc(size_t n)
{
    if (n > (size_t)-1 - HEADER)
        return NULL;
    char *b = dsf_heap_realloc(NULL, 0, n + HEADER);
    if (!b)
        return NULL;
    memcpy(b, &n, sizeof n);
    return b + HEADER;
}

static void pool_free(void *p)
{
    if (!p)
        return;
    char *b = (char *)p - HEADER;
    size_t n;
    memcpy(&n, b, sizeof n);
    dsf_heap_realloc(b, n + HEADER, 0);
}

void dsf_json_alloc_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    /* (not dsf_heap_pooled: that reserves the pool now, a system call
    ** that --version has no use for) */
    if (!dsf_heap_may_pool())
        return;
    cJSON_Hooks h = {pool_malloc, pool_free};
    cJSON_InitHooks(&h);
    pooled = 1;
}

int dsf_json_alloc_pooled(void) { return pooled; }

char *dsf_json_strndup(const char *s, size_t n)
{
    char *c = cJSON_malloc(n + 1);
    if (!c)
        dsf_xoom();
    memcpy(c, s, n);
    c[n] = '\0';
    return c;
}

char *dsf_json_strdup(const char *s) { return dsf_json_strndup(s, strlen(s)); }

char *dsf_json_int_text(long long v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%lld", v);
    return dsf_json_strndup(tmp, (size_t)n);
}
