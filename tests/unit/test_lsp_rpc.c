/*
** test_lsp_rpc.c -- the language server's message framing (lsp/rpc.h):
** Content-Length headers, messages split across reads, a malformed
** header skipped, a body over the limit skipped, input that ends early.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "lsp/rpc.h"

/* A reader of a pipe holding s[0..n) and then its end. */
static void reader_of(dsf_rpc_in *in, const char *s, size_t n)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    assert_true(n < 60000); /* fits the pipe: written before reading */
    assert_int_equal(write(fd[1], s, n), (ssize_t)n);
    close(fd[1]);
    dsf_rpc_in_init(in, fd[0]);
}

static void done(dsf_rpc_in *in)
{
    close(in->fd);
    dsf_rpc_in_free(in);
}

static void expect_body(dsf_rpc_in *in, const char *want)
{
    char *body;
    size_t len;
    const char *why = NULL;
    assert_int_equal(dsf_rpc_read(in, &body, &len, &why), DSF_RPC_OK);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(body, want, len);
    assert_int_equal(body[len], '\0');
    free(body);
}

static int next(dsf_rpc_in *in, const char **why)
{
    char *body;
    size_t len;
    int st = dsf_rpc_read(in, &body, &len, why);
    free(body);
    return st;
}

static void test_header(void **state)
{
    (void)state;
    size_t n = 0;
    const char *why = NULL;
    const char *ok = "Content-Length: 42\r\nContent-Type: application/"
                     "vscode-jsonrpc; charset=utf-8\r\n";
    assert_int_equal(dsf_rpc_parse_header(ok, strlen(ok), &n, &why), 0);
    assert_int_equal(n, 42);
    const char *lower = "content-length:7\n";
    assert_int_equal(dsf_rpc_parse_header(lower, strlen(lower), &n, &why), 0);
    assert_int_equal(n, 7);
    const char *bad[] = {"Content-Type: x\r\n", "Content-Length: 12a\r\n",
                         "Content-Length: -1\r\n", "Content-Length:\r\n",
                         "Content-Length 5\r\n",
                         "Content-Length: 1\r\nContent-Length: 1\r\n",
                         "Content-Length: 99999999999999999999\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        why = NULL;
        assert_int_equal(dsf_rpc_parse_header(bad[i], strlen(bad[i]), &n,
                                              &why), -1);
        assert_non_null(why);
    }
}

static void test_messages(void **state)
{
    (void)state;
    const char s[] = "Content-Length: 2\r\n\r\n{}"
                     "Content-Length: 12\r\nContent-Type: x\r\n\r\n"
                     "{\"id\": \"\xc3\xa9\"}"
                     "Content-Length: 0\n\n";
    dsf_rpc_in in;
    reader_of(&in, s, sizeof s - 1);
    expect_body(&in, "{}");
    expect_body(&in, "{\"id\": \"\xc3\xa9\"}");
    expect_body(&in, "");
    const char *why;
    assert_int_equal(next(&in, &why), DSF_RPC_EOF);
    done(&in);
}

static void test_bad_header_skipped(void **state)
{
    (void)state;
    const char s[] = "X-Nonsense\r\n\r\n"
                     "Content-Length: zz\r\n\r\n"
                     "Content-Length: 4\r\n\r\nnull";
    dsf_rpc_in in;
    reader_of(&in, s, sizeof s - 1);
    const char *why = NULL;
    assert_int_equal(next(&in, &why), DSF_RPC_BAD_HEADER);
    assert_string_equal(why, "a header line without ':'");
    assert_int_equal(next(&in, &why), DSF_RPC_BAD_HEADER);
    assert_string_equal(why, "Content-Length is not a number");
    expect_body(&in, "null");
    done(&in);
}

static void test_too_big_skipped(void **state)
{
    (void)state;
    const char s[] = "Content-Length: 11\r\n\r\n\"too long!\""
                     "Content-Length: 2\r\n\r\n[]";
    dsf_rpc_in in;
    reader_of(&in, s, sizeof s - 1);
    in.max_body = 10;
    const char *why = NULL;
    assert_int_equal(next(&in, &why), DSF_RPC_TOO_BIG);
    expect_body(&in, "[]");
    done(&in);
}

/* A header block with no end in sight, and input ending inside a header
** or a body: no message, no crash. */
static void test_truncated(void **state)
{
    (void)state;
    char *junk = malloc(DSF_RPC_MAX_HEADER + 100);
    memset(junk, 'a', DSF_RPC_MAX_HEADER + 100);
    dsf_rpc_in in;
    reader_of(&in, junk, DSF_RPC_MAX_HEADER + 100);
    const char *why;
    assert_int_equal(next(&in, &why), DSF_RPC_BAD_HEADER);
    assert_int_equal(next(&in, &why), DSF_RPC_EOF);
    done(&in);
    free(junk);
    const char *cut[] = {"Content-Len", "Content-Length: 10\r\n\r\n{\"a\"",
                         "Content-Length: 10\r\n"};
    for (size_t i = 0; i < 3; i++) {
        reader_of(&in, cut[i], strlen(cut[i]));
        assert_int_equal(next(&in, &why), DSF_RPC_EOF);
        done(&in);
    }
}

static void test_write(void **state)
{
    (void)state;
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    assert_int_equal(dsf_rpc_write(fd[1], "{\"x\":1}", 7), 0);
    close(fd[1]);
    dsf_rpc_in in;
    dsf_rpc_in_init(&in, fd[0]);
    expect_body(&in, "{\"x\":1}");
    done(&in);
    /* the reading end closed: an error, not a signal (SIGPIPE ignored) */
    assert_int_equal(pipe(fd), 0);
    close(fd[0]);
    signal(SIGPIPE, SIG_IGN);
    assert_int_equal(dsf_rpc_write(fd[1], "{}", 2), -1);
    close(fd[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_bad_header_skipped),
        cmocka_unit_test(test_too_big_skipped),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
