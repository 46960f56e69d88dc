"""A real webhook bot for the tests (standard library only): an HTTP server
on a free loopback port, in threads, that verifies each call's signature,
records it, and answers the way its ``behaviour`` says:

* ``good``: the first listed move (``{"move": …}``);
* ``numbered``: the first listed move as ``{"id": k}`` when moves carry ids,
  else like ``good``;
* ``steady``: the first listed move after 50 ms (a bot that thinks);
* ``slow``: the first listed move, after the deadline;
* ``error``: 500; ``garbage``: 200 with a body that is not JSON;
* ``illegal``: a move that is not listed;
* ``drip``: a good answer, one byte every 0.3 s;
* ``huge``: 200 with an endless body;
* ``redirect``: 307 to ``redirect_to`` (a second server that counts calls).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Bot:
    """A webhook service: ``url``, the ``calls`` it got, and how it answers."""

    def __init__(self, secret: str, behaviour: str = "good", redirect_to: str = ""):
        self.secret, self.behaviour, self.redirect_to = secret, behaviour, redirect_to
        self.calls: list[dict[str, Any]] = []
        #: set when the server hung up on a drip-fed or endless answer
        self.cut = threading.Event()
        self.lock = threading.Lock()
        bot = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802  # http.server's name
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                expected = "sha256=" + hmac.new(bot.secret.encode(), raw, hashlib.sha256).hexdigest()
                call = {"payload": json.loads(raw), "delivery": self.headers.get("Lodge-Delivery"),
                        "signed": hmac.compare_digest(self.headers.get("Lodge-Signature", ""), expected),
                        "at": time.time()}
                with bot.lock:
                    bot.calls.append(call)
                bot.answer(self, call["payload"])

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/bot"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, handler: BaseHTTPRequestHandler, payload: dict[str, Any]) -> None:
        legal = payload["legal_moves"]
        move = {k: v for k, v in legal[0].items() if k != "label"}
        kind = self.behaviour
        if kind == "numbered" and "id" in legal[0]:
            move = {"id": legal[0]["id"]}
        if kind == "steady":  # thinks a little before each answer, well inside the deadline
            time.sleep(0.05)
        if kind == "slow":
            time.sleep(max(0.0, payload["deadline"] / 1000 - time.time()) + 0.5)
        if kind == "illegal":
            move = {"type": "no_such_move"}
        if kind == "redirect":
            self._send(handler, 307, b"", {"Location": self.redirect_to})
        elif kind == "error":
            self._send(handler, 500, b'{"move": null}')
        elif kind == "garbage":
            self._send(handler, 200, b"<html>not json")
        elif kind == "huge":
            self._send_huge(handler)
        elif kind == "drip":
            self._drip(handler, json.dumps({"move": move}).encode())
        else:
            self._send(handler, 200, json.dumps({"move": move}).encode())

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        handler.send_response(status)
        for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def _drip(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        try:
            for i in range(len(body)):
                handler.wfile.write(body[i:i + 1])
                handler.wfile.flush()
                time.sleep(0.3)
        except OSError:  # the server hung up: as it should
            self.cut.set()

    def _send_huge(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        try:
            handler.wfile.write(b'{"move": {"type": "')
            for _ in range(10_000):  # 640 MB at most; the server stops reading long before
                handler.wfile.write(b"x" * 65536)
        except OSError:
            self.cut.set()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
