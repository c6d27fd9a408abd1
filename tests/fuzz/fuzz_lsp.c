/*
** fuzz_lsp.c -- libFuzzer target for what `dsforge lsp` reads from a
** client (issue 30): the framing of messages on its input, a document's
** ranged edits at UTF-16 positions, and the scan of the key under the
** cursor in text that need not parse.
**
** The input is used three ways:
**  1. as the byte stream of a client (through a pipe): every message the
**     reader returns is within the body limit and as long as it says,
**     and the reader always ends (EOF) after consuming the input;
**  2. as a document whose first byte chooses the split: the rest before
**     the split is the text, after it a list of edits (four position
**     bytes, a length byte, the inserted bytes); after every edit the
**     document's length is what the edit says, and every offset that
**     starts a character maps to a UTF-16 position and back to itself;
**  3. the cursor scanner at every offset of the final text;
**  4. the quick fixes' text edits (lsp/jedit.h) of the members the
**     scanner finds (the first 16 keys): every op on each; the edits are
**     in the text, in order, not overlapping, and when the text parses as
**     JSON the text they make parses too.
** Properties: no crash, no leak, the invariants above (abort otherwise).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "json/jsonc.h"
#include "lsp/docs.h"
#include "lsp/jedit.h"
#include "lsp/jcursor.h"
#include "lsp/rpc.h"
#include "lsp/utf16.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void frames(const uint8_t *data, size_t size)
{
    int fds[2];
    if (size > 60000 || pipe(fds) != 0)
        return;
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fds[1], data + off, size - off);
        if (n <= 0)
            abort();
        off += (size_t)n;
    }
    close(fds[1]);
    dsf_rpc_in in;
    dsf_rpc_in_init(&in, fds[0]);
    in.max_body = 1024; /* a lowered limit: the skip path is reached */
    for (int k = 0; k < 10000; k++) {
        char *body = NULL;
        size_t len = 0;
        const char *why = NULL;
        int st = dsf_rpc_read(&in, &body, &len, &why);
        if (st == DSF_RPC_OK) {
            if (!body || len > in.max_body || body[len] != '\0')
                abort();
            free(body);
            continue;
        }
        if (body)
            abort();
        if (st == DSF_RPC_EOF)
            break;
        if (st == DSF_RPC_BAD_HEADER && !why)
            abort();
    }
    dsf_rpc_in_free(&in);
    close(fds[0]);
}

/* Does text[0..len) parse (as dsforge reads configs)? */
static int parses(const char *text, size_t len)
{
    cJSON *doc = NULL;
    dsf_diags d = DSF_DIAGS_INIT;
    int ok = dsf_json_parse(&doc, NULL, "f", text, len, &d) == 0;
    cJSON_Delete(doc);
    dsf_diags_free(&d);
    return ok;
}

/* Every op on the member at path (canonical text) of text. */
static void fixes(const char *text, size_t len, const char *path, int ok)
{
    static const char *const ops[] = {
        "{\"op\":\"rename\",\"to\":\"zz\"}",
        "{\"op\":\"set\",\"value\":[1,{\"a\":null}]}",
        "{\"op\":\"remove\"}",
        "{\"op\":\"move\",\"to\":\"q.k\"}",
        "{\"op\":\"move\",\"to\":\"kk\"}"};
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        cJSON *e = cJSON_Parse(ops[k]);
        cJSON_AddStringToObject(e, "path", path);
        dsf_jtextedit te[2];
        size_t n;
        char *title;
        if (!dsf_jedit_plan(text, len, e, te, &n, &title)) {
            if (!title || n < 1 || n > 2)
                abort();
            dsf_buf out = DSF_BUF_INIT;
            size_t at = 0;
            for (size_t i = 0; i < n; i++) {
                if (te[i].a > te[i].b || te[i].b > len || te[i].a < at)
                    abort();
                dsf_buf_add(&out, text + at, te[i].a - at);
                dsf_buf_puts(&out, te[i].text);
                at = te[i].b;
            }
            dsf_buf_add(&out, text + at, len - at);
            if (ok && !parses(out.data ? out.data : "", out.len))
                abort(); /* a fix that breaks the file */
            dsf_buf_free(&out);
            dsf_jedit_free(te, n);
            free(title);
        }
        cJSON_Delete(e);
    }
}

static void quick_fixes(const dsf_lsp_doc *doc)
{
    int ok = parses(doc->text, doc->len), tried = 0;
    for (size_t off = 0; off < doc->len && tried < 16; off++) {
        dsf_jcursor c;
        dsf_jcursor_find(&c, doc->text, doc->len, off);
        if (c.at == DSF_JC_KEY && c.key && *c.key && c.tok_start == off) {
            dsf_buf p = DSF_BUF_INIT;
            int whole = 1;
            for (size_t i = 0; i < c.depth; i++) {
                if (c.path[i])
                    dsf_jpath_append_key(&p, c.path[i]);
                else
                    whole = 0;
            }
            dsf_jpath_append_key(&p, c.key);
            if (whole && !c.in_array) {
                fixes(doc->text, doc->len, p.data, ok);
                tried++;
            }
            dsf_buf_free(&p);
        }
        dsf_jcursor_free(&c);
    }
}

static void edits(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    size_t split = 1 + (size_t)data[0] * (size - 1) / 256;
    dsf_lsp_docs docs = DSF_LSP_DOCS_INIT;
    dsf_lsp_doc *doc = dsf_lsp_docs_open(&docs, "file:///f.json",
                                         (const char *)data + 1, split - 1,
                                         1);
    size_t i = split;
    while (i + 5 <= size) {
        long l0 = data[i] % 8, c0 = data[i + 1] % 16;
        long l1 = data[i + 2] % 8, c1 = data[i + 3] % 16;
        size_t n = data[i + 4] % 16;
        i += 5;
        if (n > size - i)
            n = size - i;
        size_t a = dsf_utf16_offset(doc->text, doc->len, l0, c0);
        size_t b = dsf_utf16_offset(doc->text, doc->len, l1, c1);
        size_t cut = b > a ? b - a : 0;
        size_t before = doc->len;
        if (dsf_lsp_doc_edit(doc, l0, c0, l1, c1, (const char *)data + i,
                             n) != 0)
            abort(); /* far below the size limit */
        if (doc->len != before - cut + n || doc->text[doc->len] != '\0')
            abort();
        i += n;
    }
    /* (a byte inside a UTF-8 sequence is no position of its own) */
    for (size_t off = 0; off <= doc->len; off++) {
        if (off < doc->len && ((unsigned char)doc->text[off] & 0xC0) == 0x80)
            continue;
        long line, ch;
        dsf_utf16_position(doc->text, doc->len, off, &line, &ch);
        if (line < 0 || ch < 0 ||
            dsf_utf16_offset(doc->text, doc->len, line, ch) != off)
            abort();
    }
    for (size_t off = 0; off <= doc->len; off++) {
        dsf_jcursor c;
        dsf_jcursor_find(&c, doc->text, doc->len, off);
        if (c.depth > DSF_JCURSOR_MAX_DEPTH || c.tok_start > c.tok_end ||
            c.tok_end > doc->len)
            abort();
        dsf_jcursor_free(&c);
    }
    quick_fixes(doc);
    dsf_lsp_docs_free(&docs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    frames(data, size);
    edits(data, size);
    return 0;
}
