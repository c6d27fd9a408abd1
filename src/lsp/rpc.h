/*
** rpc.h -- JSON-RPC 2.0 messages framed as the Language Server Protocol
** frames them: header lines ("Content-Length: N", optionally
** "Content-Type: ..."), each ended by CRLF (a bare LF is accepted), a
** blank line, then N bytes of body. Nothing here parses the body.
*/
#ifndef DSF_LSP_RPC_H
#define DSF_LSP_RPC_H

#include <stddef.h>

/* The largest body read; a longer one is skipped (DSF_RPC_TOO_BIG). */
#define DSF_RPC_MAX_BODY (64u << 20)
/* The longest header block (all lines) read. */
#define DSF_RPC_MAX_HEADER 8192

enum dsf_rpc_status {
    DSF_RPC_OK = 0,      /* *body holds a message */
    DSF_RPC_EOF,         /* the input ended (between messages or not) */
    DSF_RPC_BAD_HEADER,  /* a header block without a valid Content-Length
                            was skipped; *why says why */
    DSF_RPC_TOO_BIG      /* a body over DSF_RPC_MAX_BODY was skipped */
};

typedef struct dsf_rpc_in {
    int fd;
    char *buf;       /* bytes read and not yet consumed: buf[pos..len) */
    size_t pos, len, cap;
    size_t max_body; /* DSF_RPC_MAX_BODY unless a test lowers it */
} dsf_rpc_in;

/* A reader of fd (not owned: never closed here). */
void dsf_rpc_in_init(dsf_rpc_in *in, int fd);
void dsf_rpc_in_free(dsf_rpc_in *in);

/* Parses one header block hdr[0..n) (without the blank line): 0 with
** *content_length set, or -1 with *why (static text) for a missing,
** repeated, non-numeric or too long Content-Length or a line without
** ':'. Header names are case-insensitive; other headers are ignored. */
int dsf_rpc_parse_header(const char *hdr, size_t n, size_t *content_length,
                         const char **why);

/* Reads the next message. DSF_RPC_OK: *body (caller frees; NUL
** appended) holds *len bytes. Other statuses leave *body NULL; on
** DSF_RPC_BAD_HEADER and DSF_RPC_TOO_BIG the reader has moved past the
** bad message and the next call reads on. */
int dsf_rpc_read(dsf_rpc_in *in, char **body, size_t *len,
                 const char **why);

/* Writes body[0..len) as one framed message to fd. 0, or -1 when the
** other end is gone. */
int dsf_rpc_write(int fd, const char *body, size_t len);

#endif
