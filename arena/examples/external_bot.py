#!/usr/bin/env python3
"""An external Lodge bot: plays one seat of one match over HTTP, then exits.

The tournament harness starts it once per match and seat with:

  LODGE_URL       the server, e.g. http://127.0.0.1:8000
  LODGE_MATCH_ID  the match
  LODGE_SEAT      this bot's seat (0-based)
  LODGE_TOKEN     the seat's bearer token

Nothing else is needed: only the standard library and the public contract,
so the same loop can be written in any language.  The bot loops: read its
view; if the match is finished, exit; if it is to act, pick a legal move and
post it with the version it saw (a 409 means the world moved on: read again);
otherwise long-poll the events until something happens.  This one picks a
random legal move; put your strategy in ``choose``.

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


def call(method, path, body=None, headers=None):
    """One request; returns (status, JSON body).  A 503 (the server's store is
    briefly unavailable; nothing was written) is retried after Retry-After."""
    request = urllib.request.Request(
        URL + path, method=method, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json", **(headers or {})})
    for _attempt in range(10):
        try:
            with urllib.request.urlopen(request, timeout=70) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:  # problem+json: {"code": ..., "detail": ...}
            if error.code != 503:
                return error.code, json.load(error)
            time.sleep(float(error.headers.get("Retry-After", 1)))
    return 503, {"code": "store_unavailable", "detail": "the server's store stayed unavailable"}


def choose(view, moves):
    """Your strategy: ``view`` is what this seat may see, ``moves`` every legal move."""
    return random.choice(moves)


def main():
    base = "/v1/matches/" + MATCH
    while True:
        status, view = call("GET", base)
        if status != 200:
            sys.exit(f"cannot read the match: {status} {view.get('detail')}")
        if view["status"] == "finished":
            return
        if SEAT in view["to_act"]:
            _, legal = call("GET", base + "/legal-moves")
            if legal.get("moves"):
                move = choose(view, legal["moves"])
                status, answer = call("POST", base + "/moves", {"move": move, "version": legal["version"]},
                                      {"Idempotency-Key": uuid.uuid4().hex})
                if status not in (200, 409):  # 409: stale version or not our turn any more
                    sys.exit(f"move refused: {status} {answer.get('code')}: {answer.get('detail')}")
                continue
        call("GET", f"{base}/events?after={view['version']}&wait=30")


if __name__ == "__main__":
    main()
