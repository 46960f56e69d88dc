#!/usr/bin/env python3
"""A planning Lodge bot over the public API alone: flat Monte Carlo on worlds.

It plays like ``external_bot.py`` (same environment variables, same stream
loop, which it reuses) but chooses its moves by planning on the server:

1. ``GET /v1/matches/{id}/worlds?n=W`` — W worlds for its seat: complete
   states that agree with everything the seat knows, every card it has not
   seen dealt anew;
2. for every legal move and every world, ``POST /v1/games/{game}/simulate``
   with that move and ``"playout": "random"``: the server plays the world out
   with random moves and returns the result, storing nothing;
3. the move with the best mean result wins (a win over n seats scores 1, a
   loss −1, a place in between in between).

Only the standard library and the contract, so the same loop can be written
in any language.  ``LODGE_PLAYOUTS`` (default 48) bounds the simulations per
decision: the worlds per move are that divided by the number of moves.

  python arena/examples/montecarlo_bot.py   # with LODGE_URL, LODGE_MATCH_ID, LODGE_SEAT, LODGE_TOKEN
  lodge-arena tournament biberbande --bot mc=cmd:"python arena/examples/montecarlo_bot.py" --bot heuristic
"""
import os
import random
import sys

import external_bot
from external_bot import BASE, SEAT, call

PLAYOUTS = int(os.environ.get("LODGE_PLAYOUTS", "48"))
MAX_WORLDS = 64  # the contract's bound on n


def score(result, seats):
    """This seat's result: (seats ranked below − seats ranked above) / (seats − 1)."""
    above = 0
    for group in result["ranking"]:
        if SEAT in group:
            return (seats - above - len(group) - above) / (seats - 1)
        above += len(group)
    return 0.0


def playout(game, world, move, seed):
    """The result for this seat of ``move`` in ``world``, played out at random by the server."""
    status, answer = call("POST", f"/v1/games/{game}/simulate",
                          {"world": world, "moves": [{"seat": SEAT, "move": move}], "playout": "random",
                           "seed": seed, "as": SEAT})
    if status != 200:
        sys.exit(f"simulate refused: {status} {answer.get('code')}: {answer.get('detail')}")
    return score(answer["result"], len(answer["state"]["players"]))


def choose(view, moves):
    """The move with the best mean playout result over the seat's worlds."""
    if len(moves) == 1:
        return moves[0]
    worlds_per_move = max(1, min(MAX_WORLDS, PLAYOUTS // len(moves)))
    status, answer = call("GET", f"{BASE}/worlds?n={worlds_per_move}")
    if status == 409:  # the match moved on meanwhile: this move's post is refused as stale anyway
        return moves[0]
    if status != 200:
        sys.exit(f"worlds refused: {status} {answer.get('code')}: {answer.get('detail')}")
    worlds = [w["world"] for w in answer["worlds"]]
    seeds = random.Random(view["version"]).sample(range(2**31), len(worlds))
    means = [sum(playout(view["game"], w, move, s) for w, s in zip(worlds, seeds)) / len(worlds)
             for move in moves]
    return moves[max(range(len(moves)), key=means.__getitem__)]


if __name__ == "__main__":
    external_bot.choose = choose
    external_bot.main()
