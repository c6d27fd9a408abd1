#!/usr/bin/env python3
"""A static file server for dsforge's HTTP tests that misbehaves on request.

Binds 127.0.0.1 only, on an ephemeral port, and prints "PORT <n>" on its
first line of stdout. Serves ROOT; the first path segment may select a
misbehaviour for the rest of the path:

  /_status/CODE/...   answer with that status
  /_stall/...         send headers and a few bytes, then stall
  /_truncate/...      promise more bytes (Content-Length) than are sent
  /_big/...           stream bytes with no Content-Length, without end
  /_loop/...          redirect to itself, forever
  /_to/SCHEME/...     redirect to SCHEME://127.0.0.1/... (file, ftp, ...)

Every request is appended to LOG as one JSON line: method, path, status,
if_none_match, authorization (whether one was sent, never its value).
ETags are the file's sha256, so revalidation works like a real server.
"""
import argparse
import hashlib
import json
import os
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without TCP_NODELAY,
    # Nagle plus the client's delayed ACK adds ~40 ms to every response,
    # which real servers do not.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def record(self, status):
        entry = {
            "method": self.command,
            "path": self.path,
            "status": status,
            "if_none_match": self.headers.get("If-None-Match"),
            "authorization": self.headers.get("Authorization") is not None,
            "bearer_ok": self.headers.get("Authorization")
            == "Bearer " + self.server.expect_token
            if self.server.expect_token else None,
        }
        with self.server.log_lock:
            with open(self.server.log, "a") as f:
                f.write(json.dumps(entry) + "\n")

    def plain(self, status, body=b"", headers=()):
        self.record(status)
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        parts = self.path.split("?")[0].lstrip("/").split("/")
        mode = parts[0] if parts and parts[0].startswith("_") else None
        rest = parts[1:] if mode else parts
        if mode == "_status":
            return self.plain(int(rest[0]), b"error page\n")
        if mode == "_loop":
            return self.plain(302, b"", [("Location", self.path)])
        if mode == "_to":
            target = "%s://127.0.0.1/%s" % (rest[0], "/".join(rest[1:]))
            return self.plain(302, b"", [("Location", target)])
        rel = "/".join(rest)
        if ".." in rest:
            return self.plain(400, b"bad path\n")
        path = os.path.join(self.server.root, rel)
        if not os.path.isfile(path):
            return self.plain(404, b"not found\n")
        with open(path, "rb") as f:
            body = f.read()
        etag = '"%s"' % hashlib.sha256(body).hexdigest()
        if mode == "_stall":
            self.record(200)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) + 100))
            self.end_headers()
            self.wfile.write(body[:1])
            self.wfile.flush()
            time.sleep(30)
            return
        if mode == "_truncate":
            self.record(200)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) + 1000))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True
            return
        if mode == "_big":
            self.record(200)
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            chunk = b"x" * 65536
            try:
                for _ in range(4096):
                    self.wfile.write(chunk)
            except OSError:
                pass
            return
        if self.headers.get("If-None-Match") == etag:
            return self.plain(304, b"", [("ETag", etag)])
        return self.plain(200, body, [("ETag", etag),
                                      ("Content-Type", "application/octet-stream")])


class Server(ThreadingHTTPServer):
    # The default listen backlog of 5 drops SYNs when a client opens 16
    # connections at once, and the kernel retries them only after 1 s.
    request_queue_size = 128
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("log")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--token")
    args = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    srv.root = args.root
    srv.log = args.log
    srv.log_lock = threading.Lock()
    srv.expect_token = args.token
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("PORT %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
