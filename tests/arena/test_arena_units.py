"""The arena's pieces that need no server: entrant specs, the schedule
(duplicate rotations, seeds), places, the Wilson interval, ratings, the
text view of ``lodge-arena play``, the terminal player's table and prompt,
and the client's error classes."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import requests

import bots as builtin_bots
from arena import client as c
from arena import human, results
from arena.entrants import Entrant
from arena.referee import MatchOutcome, SeatOutcome, places
from arena.show import event_line, value, view_lines
from arena.tournament import TournamentConfig, TournamentRun, check, derive_seed, schedule
from bots import RandomBot, bot_class, make_bot


def bots(*specs: str) -> list[Entrant]:
    return [Entrant.parse(s) for s in specs]


def test_entrant_specs():
    assert Entrant.parse("random") == Entrant("random", "random")
    assert Entrant.parse("ana=heuristic") == Entrant("ana", "heuristic")
    ext = Entrant.parse('me=cmd:python my bot.py --fast')
    assert ext.external and ext.command == "python my bot.py --fast"
    for bad in ("=random", "a=grandmaster", "a=cmd:", 'a=cmd:python "unclosed', "a=server:", "a=server:cmd",
                "a=server:grandmaster"):
        with pytest.raises(ValueError):
            Entrant.parse(bad)


def test_server_bot_entrants_are_bot_seats_at_creation():
    srv = Entrant.parse("srv=server:heuristic")
    assert (srv.name, srv.kind, srv.server_bot, srv.external) == ("srv", "server:heuristic", "heuristic", False)
    assert srv.player() == {"name": "srv", "bot": "heuristic"} and srv.describe() == "srv=server:heuristic"
    assert Entrant.parse("server:random").player() == {"name": "server:random", "bot": "random"}
    for local in ("ana=heuristic", "r=random", "x=cmd:python bot.py"):
        assert Entrant.parse(local).server_bot is None and Entrant.parse(local).player() == local.split("=")[0]


def test_bot_kinds():
    assert bot_class("random", "biberclan") is RandomBot
    for game in ("biberbande", "biberclan", "mein-lieber-biber", "thirteen-beavers"):
        bot = make_bot("heuristic", game, 1, 5)
        assert (bot.game, bot.seat) == (game, 1) and bot.needs_view
    with pytest.raises(ValueError):
        bot_class("heuristic", "chess")


def config(entrants: list[Entrant], **kw) -> TournamentConfig:
    return TournamentConfig(game="biberbande", entrants=entrants, **{"matches": 6, "seats": 3, "seed": 4, **kw})


def test_duplicate_schedule_rotates_every_deal_through_every_seat():
    plans = schedule(config(bots("a=random", "b=random", "c=heuristic"), matches=7, duplicate=True))
    assert len(plans) == 9  # rounded up to whole deals of 3
    assert [p.index for p in plans] == list(range(9))
    for deal in range(3):
        same = [p for p in plans if p.deal == deal]
        assert len(same) == 3 and len({p.seed for p in same}) == 1
        for seat in range(3):
            assert sorted(p.lineup[seat].name for p in same) == ["a", "b", "c"]
    assert len({p.seed for p in plans}) == 3
    assert len({s for p in plans for s in p.bot_seeds}) == 27


def test_schedule_is_reproducible_and_samples_lineups():
    entrants = bots("a=random", "b=random", "c=random", "d=random", "e=random")
    first = schedule(config(entrants, matches=20, seats=2))
    assert first == schedule(config(entrants, matches=20, seats=2))
    assert first != schedule(config(entrants, matches=20, seats=2, seed=5))
    assert all(len({e.name for e in p.lineup}) == 2 for p in first)
    assert len({e.name for p in first for e in p.lineup}) == 5
    assert 0 <= derive_seed(1, "deal", 0) < 2 ** 53 and derive_seed(1, "deal", 0) == derive_seed(1, "deal", 0)
    # pinned: the first 53 bits of the SHA-256 the arena has always used for its deals
    assert derive_seed(1, "deal", 0) == 8538366380456079


def test_all_entrants_seated_in_rotation_when_they_fill_the_table():
    plans = schedule(config(bots("a=random", "b=random"), matches=4, seats=2))
    assert [[e.name for e in p.lineup] for p in plans] == [["a", "b"], ["b", "a"], ["a", "b"], ["b", "a"]]
    assert len({p.seed for p in plans}) == 4


def test_check_refuses_what_cannot_be_played():
    entry = {"min_players": 2, "max_players": 6}
    check(config(bots("a=random", "b=random", "c=random")), entry)
    for bad in (config(bots("a=random", "a=heuristic", "c=random")), config(bots("a=random", "b=random")),
                config(bots("a=random"), seats=1), config(bots("a=random", "b=random", "c=random"), parallel=0)):
        with pytest.raises(ValueError):
            check(bad, entry)


def test_move_timeout_is_the_servers_clock_range():
    """--move-timeout becomes clock.per_move_ms (1,000 … 86,400,000 ms)."""
    entry = {"min_players": 2, "max_players": 6}
    three = bots("a=random", "b=server:heuristic", "c=heuristic")
    for seconds in (None, 1.0, 2.5, 86_400.0):
        check(config(three, move_timeout=seconds), entry)
    for seconds in (0.5, 0.999, 86_401.0):
        with pytest.raises(ValueError, match="server's clock"):
            check(config(three, move_timeout=seconds), entry)
    with pytest.raises(ValueError, match="no heuristic"):
        check(TournamentConfig(game="chess", entrants=bots("a=random", "b=server:heuristic"), matches=1, seats=2),
              entry)


def test_places_share_ties_and_skip():
    assert places([[2], [0, 3], [1]], 4) == [2, 4, 1, 2]
    assert places([[0, 1, 2]], 3) == [1, 1, 1]


def test_wilson_interval():
    low, high = results.wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    assert results.wilson(0, 10)[0] == 0 and results.wilson(10, 10)[1] == 1
    assert results.wilson(0, 0) == (0.0, 1.0)


def outcome(index: int, scores: list[int], names: list[str]) -> MatchOutcome:
    ranking = sorted(range(len(scores)), key=lambda s: -scores[s])
    place = places([[s] for s in ranking], len(scores))
    return MatchOutcome(index=index, deal=index, seed=index, match_id=f"m{index}", moves=1, seconds=0.1,
                        seats=[SeatOutcome(seat=s, entrant=names[s], score=scores[s], place=place[s],
                                           winner=place[s] == 1) for s in range(len(scores))],
                        result={"scores": scores, "ranking": [[s] for s in ranking], "winners": [ranking[0]]})


def test_standings_and_ratings_follow_the_results():
    entrants = bots("strong=heuristic", "weak=random")
    names = ["strong", "weak"]
    outcomes = [outcome(i, [10, 3] if i % 2 == 0 else [3, 10], names if i % 2 == 0 else names[::-1])
                for i in range(30)]
    outcomes[-1] = outcome(29, [3, 10], names)  # one upset
    run = TournamentRun(config(entrants, seats=2, matches=30), outcomes, seconds=6.0)
    rows = results.standings(run)
    assert [r.bot for r in rows] == ["strong", "weak"]
    strong, weak = rows
    assert (strong.matches, strong.wins, weak.wins) == (30, 29, 1)
    assert strong.mu > weak.mu and strong.win_low > 0.5 > weak.win_high
    assert strong.mean_place == pytest.approx(31 / 30) and run.matches_per_minute == pytest.approx(300)
    text = results.table(rows)
    assert text.splitlines()[0].startswith("bot") and "96.7%" in text


def test_text_view_shows_hidden_cards_as_question_marks():
    assert value([None, "3", [1, None]]) == "[? 3 [1 ?]]" and value({"a": None}) == "{a=?}"
    view = {"version": 3, "round": 1, "rounds": 2, "phase": "action", "to_act": [1], "scores": [0, 4],
            "players": [{"seat": 0, "name": "ana", "display": [None, "5"]}, {"seat": 1, "name": "bo", "display": []}],
            "board": {"discard": ["7"]}, "result": {"winners": [1], "scores": [0, 4]}}
    lines = view_lines(view)
    assert "to act: bo (seat 1)" in lines[0] and "display=[? 5]" in lines[1]
    assert lines[-1].endswith("winners bo · scores [0 4]")
    assert event_line({"type": "drew", "seat": 0, "version": 3, "card": None}, ["ana", "bo"]) == \
        "  · ana (seat 0): drew  card=?"


def test_bots_decide_from_the_contract_only():
    """Every built-in bot module imports neither the engines nor the service:
    it sees what a client over HTTP sees (the seat's view and legal moves).
    Only the package's factory (``bots/__init__.py``, no bot) reads the
    engine registry, for the heuristic bot a game's declaration names."""
    folder = Path(builtin_bots.__file__).parent
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text())
        imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        allowed = {"engine"} if path.name == "__init__.py" else set()
        assert not {m for m in imported if m.split(".")[0] in ("engine", "service")} - allowed, path.name


def test_terminal_table_seats_the_person_among_server_bots():
    table = human.Table(game="biberbande", bots=["heuristic", "random"], name="ana", seat=1)
    assert table.players() == [{"name": "heuristic-0", "bot": "heuristic"}, "ana",
                               {"name": "random-2", "bot": "random"}]
    assert human.Table(game="biberbande", bots=["random"]).players() == ["you", {"name": "random-1", "bot": "random"}]


def test_terminal_moves_are_numbered_with_their_labels():
    assert human.move_line(1, {"type": "draw"}) == "  1. draw"
    assert human.move_line(12, {"type": "swap_drawn", "slot": 2, "label": "swap into slot 2"}) == \
        " 12. swap_drawn  slot=2  — swap into slot 2"


def test_terminal_prompt_asks_again_until_a_listed_number_or_resign():
    moves = [{"type": "draw"}, {"type": "knock"}]
    answers = iter(["", "0", "3", "x", " 2 "])
    said: list[str] = []
    assert human.choose(moves, lambda prompt: next(answers), said.append) == {"type": "knock"}
    assert len(said) == 4 and all("1 to 2" in line for line in said)
    assert human.choose(moves, lambda prompt: "Resign", said.append) == {"type": "resign"}
    with pytest.raises(EOFError):
        human.choose(moves, lambda prompt: (_ for _ in ()).throw(EOFError()), said.append)


def _response(status: int, body: bytes, headers: dict[str, str] | None = None) -> requests.Response:
    response = requests.Response()
    response.status_code, response._content = status, body
    response.headers.update(headers or {})
    return response


def test_1_1_error_codes_have_their_classes():
    for status, code, cls in ((409, "seat_taken", c.SeatTaken), (429, "rate_limited", c.RateLimited),
                              (422, "idempotency_key_reused", c.IdempotencyKeyReused)):
        error = c.error_for(_response(status, b'{"code": "%s", "detail": "no"}' % code.encode()))
        assert type(error) is cls and (error.status, error.code) == (status, code)
    limited = c.error_for(_response(429, b"", {"Retry-After": "3"}))
    assert isinstance(limited, c.RateLimited) and isinstance(limited, c.Retryable) and limited.retry_after == 3
    assert isinstance(c.error_for(_response(503, b"")), c.Retryable)
    assert not isinstance(c.error_for(_response(409, b'{"code": "seat_taken"}')), c.Retryable)
