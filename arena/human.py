"""``lodge-arena play GAME --bots heuristic,random``: a person at the terminal
against bots the server plays.

The match has the person's seat (a token seat) and one bot seat per kind;
the server makes the bots' moves inside the request that hands them the
turn, so after each of the person's moves the answer is already the person's
next decision (or the end).  Each decision shows the events since the last
one, the seat's view (:mod:`arena.show`) and its legal moves numbered from 1
(with their ``label`` when the server gives one); the person types a number,
or ``resign``.  With a clock the deadline is shown; when it passes first, the
server plays the seat's fallback move and the late answer is refused (409),
which is said before the next decision.  The server plays a bounded number
of moves inside one request (the rest right after, from its sweeper), so a
view may still show a bot, or the person's seat after a resign, to act: the
player then waits for the match to move on.  Reads plain lines, so a pipe
works as well as a keyboard.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from engine.ranking import places

from .client import JSON, LodgeClient, MatchFinished, VersionConflict, legal_of
from .show import event_line, fields, view_lines

RESIGN = "resign"
LEGEND = "(? = hidden from you, or empty; known = what you remember)"

Ask = Callable[[str], str]
Say = Callable[[str], None]


@dataclass(frozen=True)
class Table:
    """What to create: the person's ``name`` at ``seat`` and the bots'
    kinds for the other seats, in order."""
    game: str
    bots: list[str]
    name: str = "you"
    seat: int = 0
    seed: int | None = None
    options: JSON | None = None
    clock: float | None = None  # seconds per decision

    def players(self) -> list[str | JSON]:
        kinds = iter(self.bots)
        return [self.name if s == self.seat else {"name": f"{(kind := next(kinds))}-{s}", "bot": kind}
                for s in range(len(self.bots) + 1)]


def move_line(number: int, move: JSON) -> str:
    """``  3. swap_drawn  slot=2`` and the move's label, if it has one."""
    text = f"{number:>3}. {move['type']}  {fields(move, ('type', 'label'))}".rstrip()
    return text + (f"  — {move['label']}" if move.get("label") else "")


def choose(moves: list[JSON], ask: Ask, say: Say) -> JSON:
    """The move the person picks by number (or the resign move); asks again
    after anything else.  EOFError when the input ends."""
    while True:
        answer = ask(f"your move (1…{len(moves)}, or {RESIGN}): ").strip().lower()
        if answer == RESIGN:
            return {"type": RESIGN}
        if answer.isdigit() and 1 <= int(answer) <= len(moves):
            return moves[int(answer) - 1]
        say(f"  type a number from 1 to {len(moves)}, or {RESIGN}")


def play(client: LodgeClient, table: Table, *, ask: Ask, say: Say) -> JSON:
    """Create the match, play it to the end with the person's answers, and
    return its final view (as the person's seat sees it)."""
    per_move_ms = None if table.clock is None else round(table.clock * 1000)
    created = client.create(table.game, table.players(), seed=table.seed, options=table.options,
                            per_move_ms=per_move_ms)
    match_id, token, seat = created.match_id, created.token(table.seat), table.seat
    say(f"{table.game} match {created.match_id}: you are {table.name} (seat {seat}). {LEGEND}")
    view = client.view(match_id, token, legal=True)
    legal = legal_of(view)
    seen, resigned = -1, False
    while True:
        page = client.events(match_id, token, after=seen)
        names = [p["name"] for p in view["players"]]
        for event in page.events:
            say(event_line(event, names))
        seen = page.version
        say("\n".join(view_lines(view)))
        if view["status"] == "finished":
            return view
        moves = None if resigned else legal.get(seat)
        if not moves:  # not the person's decision (a bot's or a resigned seat's the server still owes): wait
            client.events(match_id, token, after=view["version"], wait=30)
            view = client.view(match_id, token, legal=True)
            legal = legal_of(view)
            continue
        deadline = view.get("deadline", {}).get(str(seat))
        if deadline is not None:
            say(f"   clock: {max(0.0, deadline / 1000 - time.time()):.0f} s left")
        for number, move in enumerate(moves, 1):
            say(move_line(number, move))
        move = choose(moves, ask, say)
        try:
            answer = client.move(match_id, token, move, version=view["version"], legal=True)
            view, legal, resigned = answer.state, answer.legal_moves, move["type"] == RESIGN
        except (VersionConflict, MatchFinished):
            say("   too late: the clock played your fallback move")
            view = client.view(match_id, token, legal=True)
            legal = legal_of(view)


def summary(view: JSON) -> list[str]:
    """The final places, one line per seat."""
    result = view["result"]
    place = places(result["ranking"], len(view["players"]))
    return [f"  {place[p['seat']]}. {p['name']} (seat {p['seat']}) score {result['scores'][p['seat']]}"
            for p in sorted(view["players"], key=lambda p: place[p["seat"]])]
