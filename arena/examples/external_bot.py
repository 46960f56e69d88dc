#!/usr/bin/env python3
"""An external Lodge bot: plays one seat of one match over HTTP, then exits.

The tournament harness starts it once per match and seat with:

  LODGE_URL       the server, e.g. http://127.0.0.1:8000
  LODGE_MATCH_ID  the match
  LODGE_SEAT      this bot's seat (0-based)
  LODGE_TOKEN     the seat's bearer token

Nothing else is needed: only the standard library and the public contract,
so the same loop can be written in any language.  One request per move: the
bot follows the match's stream (NDJSON) with ``state=true&legal=true``, so
every message of the current version carries the seat's view and, when it
is to act, its legal moves; it posts one of them with that version (a 409
means the world moved on, e.g. its clock ran out: the stream brings the new
state).  The stream closes when the match is finished; a stream the server
closes earlier (a restart) is resumed after the last version seen.  This one
picks a random legal move; put your strategy in ``choose``.

  python arena/examples/external_bot.py   # with the four variables set
"""
import json
import os
import random
import sys
import time
import urllib.error
import urllib.request
import uuid

URL = os.environ["LODGE_URL"].rstrip("/")
MATCH = os.environ["LODGE_MATCH_ID"]
SEAT = int(os.environ["LODGE_SEAT"])
TOKEN = os.environ["LODGE_TOKEN"]
BASE = "/v1/matches/" + MATCH


def request(method, path, body=None, headers=None):
    return urllib.request.Request(
        URL + path, method=method, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json", **(headers or {})})


def call(method, path, body=None, headers=None):
    """One request; returns (status, JSON body).  A 503 (the server's store is
    briefly unavailable; nothing was written) is retried after Retry-After."""
    for _attempt in range(10):
        try:
            with urllib.request.urlopen(request(method, path, body, headers), timeout=70) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:  # problem+json: {"code": ..., "detail": ...}
            if error.code != 503:
                return error.code, json.load(error)
            time.sleep(float(error.headers.get("Retry-After", 1)))
    return 503, {"code": "store_unavailable", "detail": "the server's store stayed unavailable"}


def stream(after):
    """The match's messages after version ``after``, one JSON object per line
    (an empty line is a keep-alive), until the server closes the stream."""
    path = f"{BASE}/stream?after={after}&state=true&legal=true"
    with urllib.request.urlopen(request("GET", path, headers={"Accept": "application/x-ndjson"}),
                                timeout=70) as response:
        for line in response:
            if line.strip():
                yield json.loads(line)


def choose(view, moves):
    """Your strategy: ``view`` is what this seat may see, ``moves`` every legal move."""
    return random.choice(moves)


def main():
    after = -1
    while True:
        try:
            for message in stream(after):
                after = message["version"]
                moves = message.get("legal_moves", {}).get(str(SEAT))
                if moves:  # only on the current version's message, and only when this seat is to act
                    status, answer = call("POST", BASE + "/moves",
                                          {"move": choose(message["state"], moves), "version": after},
                                          {"Idempotency-Key": uuid.uuid4().hex})
                    if status not in (200, 409):  # 409: stale version or not our turn any more
                        sys.exit(f"move refused: {status} {answer.get('code')}: {answer.get('detail')}")
        except urllib.error.HTTPError as error:
            if error.code != 503:
                sys.exit(f"cannot follow the match: {error.code} {json.load(error).get('detail')}")
            time.sleep(float(error.headers.get("Retry-After", 1)))
        status, view = call("GET", BASE)
        if status != 200:
            sys.exit(f"cannot read the match: {status} {view.get('detail')}")
        if view["status"] == "finished":
            return


if __name__ == "__main__":
    main()
