"""Requests gunicorn refuses before the app (414 request line too long, 431
headers too large, 400 malformed) come back as problem+json too."""
from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.live


def _raw(base: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    url = urlsplit(base)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:  # the server closed with part of our request unread (gevent
            if not data:              # workers): its answer came before the reset
                raise
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


@pytest.mark.parametrize("status, request_bytes", [
    (414, b"GET /v1/games/" + b"g" * 5_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    (431, b"GET /v1/games HTTP/1.1\r\nHost: x\r\nX-Big: " + b"h" * 9000 + b"\r\n\r\n"),
    (431, b"GET /v1/games HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(120)) + b"\r\n"),
    (400, b"GET\x01 / HTTP/1.1\r\nHost: x\r\n\r\n"),
])
def test_server_limits_answer_problem_json(live_server: str, status: int, request_bytes: bytes):
    got, headers, body = _raw(live_server, request_bytes)
    assert got == status
    assert headers["content-type"] == "application/problem+json"
    assert headers["access-control-allow-origin"] == "*"
    problem = json.loads(body)
    assert problem["status"] == status and problem["code"] == f"http_{status}" and problem["title"]
    assert len(problem["detail"]) <= 200
