"""An external bot that thinks too long: its first decision is immediate, the
next TIMES (argv[2], default 2) each sleep SECONDS (argv[1]) before posting
the first legal move with the version seen before sleeping, which the
server's clock (``--move-timeout``) has made stale by then with the seat's
fallback move (409, ignored); later decisions are immediate again.  Used to
test ``--move-timeout``; standard library only, like any external bot.  It
reads its view with ``legal=true``: view and legal moves in one request."""
import json
import os
import sys
import time
import urllib.error
import urllib.request

URL, MATCH, TOKEN = os.environ["LODGE_URL"], os.environ["LODGE_MATCH_ID"], os.environ["LODGE_TOKEN"]
SEAT = int(os.environ["LODGE_SEAT"])
SLEEP = float(sys.argv[1])
TIMES = int(sys.argv[2]) if len(sys.argv) > 2 else 2


def call(method, path, body=None):
    request = urllib.request.Request(f"{URL}/v1/matches/{MATCH}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=70) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


decisions = 0
while True:
    _, view = call("GET", "?legal=true")
    if view["status"] == "finished":
        break
    if SEAT in view["to_act"]:
        if 1 <= decisions <= TIMES:
            time.sleep(SLEEP)
        decisions += 1
        status, _ = call("POST", "/moves", {"move": view["legal_moves"][str(SEAT)][0], "version": view["version"]})
        assert status in (200, 409), status
    else:
        call("GET", f"/events?after={view['version']}&wait=30")
