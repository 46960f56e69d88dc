"""An external bot that always thinks too long: before each move it sleeps
SECONDS (argv[1]), then posts the first legal move with the version it saw,
which the referee's default move has made stale by then (409, ignored).
Used to test ``--move-timeout``; standard library only."""
import json
import os
import sys
import time
import urllib.error
import urllib.request

URL, MATCH, SEAT, TOKEN = (os.environ[k] for k in ("LODGE_URL", "LODGE_MATCH_ID", "LODGE_SEAT", "LODGE_TOKEN"))
SLEEP = float(sys.argv[1])


def call(method, path, body=None):
    request = urllib.request.Request(f"{URL}/v1/matches/{MATCH}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=70) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


while True:
    _, view = call("GET", "")
    if view["status"] == "finished":
        break
    if int(SEAT) in view["to_act"]:
        _, legal = call("GET", "/legal-moves")
        time.sleep(SLEEP)
        status, _ = call("POST", "/moves", {"move": legal["moves"][0], "version": legal["version"]})
        assert status in (200, 409), status
    else:
        call("GET", f"/events?after={view['version']}&wait=30")
