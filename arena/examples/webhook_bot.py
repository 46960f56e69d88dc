#!/usr/bin/env python3
"""A Lodge webhook bot: an HTTP service that Lodge calls whenever its seat
must decide (docs/api.md, "Webhook seats").  Standard library only.

  WEBHOOK_SECRET=<16…256 characters> python arena/examples/webhook_bot.py [port]

listens on 127.0.0.1:<port> (default 8800).  Seat it in a match with

  {"name": "snake", "webhook": {"url": "http://127.0.0.1:8800/", "secret": "<the same secret>"}}

(the server's ``WEBHOOK_HOSTS`` must allow 127.0.0.1).  Each call is a POST
of ``{"match_id", "game", "seat", "version", "deadline", "state",
"legal_moves", "latency_ms"}``; the bot checks its ``Lodge-Signature``
(HMAC-SHA256 of the raw body with the secret: a call that does not carry it
is not Lodge's) and answers ``{"move": …}``, one of the legal moves, before
the deadline (epoch ms).  A late, wrong or illegal answer costs the seat its
move: the server plays its fallback.  This one picks a random legal move;
put your strategy in ``choose``.
"""
import hashlib
import hmac
import json
import os
import random
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ["WEBHOOK_SECRET"].encode()
MAX_BODY = 1 << 20


def signed(body, header):
    """Whether ``header`` (Lodge-Signature) is the body's HMAC-SHA256 with the secret."""
    expected = "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header or "")


def choose(call):
    """The move to play: here a random legal one (its label dropped)."""
    move = random.choice(call["legal_moves"])
    return {k: v for k, v in move.items() if k != "label"}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY:
            return self.reply(400, {"error": "a JSON body is expected"})
        body = self.rfile.read(length)
        if not signed(body, self.headers.get("Lodge-Signature")):
            return self.reply(401, {"error": "bad signature"})
        call = json.loads(body)
        self.reply(200, {"move": choose(call)})

    def reply(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt, *args):
        sys.stderr.write(f"{self.headers.get('Lodge-Delivery')} {fmt % args}\n")


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8800
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
