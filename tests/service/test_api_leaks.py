"""Hidden information over HTTP, judged by the independent knowledge model
(tests/knowledge.py) for every game of ``engine.REGISTRY``.

Hypothesis draws a match (players, seed, options from the game's own
catalogue, a given deck and other secret options or not, an open public seat,
a server bot seat) and plays it with random legal moves through the API
(embedded store), then ends it (resigning) if it runs long.  At every version
each viewer (spectator, every seat) reads, and the model judges every field,
by value, wherever a card value sits:

* the view, the events page, the legal moves (their cards are the seat's
  own), a refused move's error body, the record (unfinished: 401/403);
* the move response (events and view) of the seat that moved;
* every input of the server bot (its view, its legal moves) and its seed,
  from which the match seed must not follow;
* the create response (spectator view), the lobby entry and the seat table
  (no card at all; a given secret option reads ``"hidden"``), the claim
  response (the claimer's view);
* after the end, every viewer's whole stream (events and view).

Besides, no output to anyone but the admin, before the end, holds a list
equal to a given ``deck`` or one of ``decks`` (the other secret options,
13 Beavers' fish and wolves, are tokens the value judges count anyway).
"""
from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import bots
from engine import REGISTRY
from engine.core import ADMIN_VIEWER, BOOL, DECK, DECKS, HIDDEN_OPTION, INT, PERMUTATION, SEED_MAX, STRING, Game
from service.domain.views import with_ids
from tests import conftest
from tests.conftest import examples, match_options
from tests.http_helpers import W1_OPTIONS, Api, strip_label
from tests.knowledge import JSON, Model, Seat, judge_cardless, judge_events, judge_view, lists, model_for, quoted_cards

GAMES = REGISTRY.ids()
#: int options are drawn from minimum…minimum + INT_SPAN (short matches)
INT_SPAN = 4
#: moves played before the match is ended by resignations (``--fast``: fewer; its one example of
#: 13 Beavers or Mein lieber Biber does not end within 80 moves either)
MAX_MOVES = 30 if conftest.FAST else 80
LEAKS = settings(max_examples=examples(4), deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
#: the bot's old seed was ``match_seed * SEED_STEP + version``: invertible
OLD_SEED_STEP = 1_000_003


def _game(game_id: str) -> Game:
    game = REGISTRY.get(game_id)
    assert game is not None
    return game


@st.composite
def match_plans(draw: st.DrawFn, game: Game) -> dict[str, Any]:
    """Players, seed and options of one match, from the game's catalogue
    (under ``--fast`` its ``short`` preset: :func:`match_options`), whether
    seat n−1 is a server bot, and the random source of the moves."""
    n = draw(st.integers(game.min_players, min(game.max_players, 4)))
    options: dict[str, Any] = {}
    for option in game.options:
        if option.type == INT and draw(st.booleans()):
            low = option.minimum or 0
            high = option.maximum_for(n)
            options[option.name] = draw(st.integers(low, low + INT_SPAN if high is None else min(high, low + INT_SPAN)))
        elif option.type == BOOL:
            options[option.name] = draw(st.booleans())
        elif option.type == STRING and option.choices:
            options[option.name] = draw(st.sampled_from(option.choices))
        elif option.type == PERMUTATION and draw(st.booleans()):
            options[option.name] = draw(st.permutations(list(option.items or ())))
    options = match_options(game.id, options)
    seed = draw(st.integers(0, 2**53 - 1))
    resolved = game.create([f"p{i}" for i in range(n)], seed, options)[2]
    if draw(st.booleans()):
        kind = draw(st.sampled_from([o.type for o in game.options if o.type in (DECK, DECKS)]))
        deck = draw(st.permutations(game.canonical_deck(resolved)))
        options["deck" if kind == DECK else "decks"] = deck if kind == DECK else [deck]
    bot = n >= 3 or draw(st.booleans())
    return {"n": n, "seed": seed, "options": options, "bot": bot, "moves": draw(st.randoms())}


@contextmanager
def bot_spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Every server bot made, with its seed and what it was shown."""
    calls: list[dict[str, Any]] = []
    make_bot = bots.make_bot

    def spy(kind: str, game: str, seat: int, seed: int) -> Any:
        bot = make_bot(kind, game, seat, seed)
        choose = bot.choose

        def chosen(view: dict[str, Any], moves: list[dict[str, Any]]) -> Any:
            calls.append({"seat": seat, "seed": seed, "view": view, "moves": moves})
            return choose(view, moves)

        bot.choose = chosen  # type: ignore[method-assign, assignment]
        return bot

    monkeypatch.setattr(bots, "make_bot", spy)
    yield calls


class Judge:
    """One match played through the API and judged after every version."""

    def __init__(self, api: Api, game: Game, plan: dict[str, Any], bot_calls: list[dict[str, Any]]):
        self.api, self.game, self.plan, self.bot_calls = api, game, plan, bot_calls
        n = plan["n"]
        players: list[Any] = [{"name": "p0", "open": True}, *(f"p{i}" for i in range(1, n))]
        if plan["bot"]:
            players[-1] = {"name": f"p{n - 1}", "bot": "heuristic"}
        self.bot_seat = n - 1 if plan["bot"] else None
        r = api.create_raw({"game": game.id, "players": players, "seed": plan["seed"],
                            "options": plan["options"], "public": True})
        assert r.status == 201, r
        self.created = r.json
        self.id, self.admin = self.created["match_id"], self.created["admin_token"]
        start, _, resolved = game.create([f"p{i}" for i in range(n)], plan["seed"], plan["options"])
        self.model: Model = model_for(game, n, resolved)
        self.secrets = [v for o in game.options if o.secret and (v := plan["options"].get(o.name)) is not None]
        self.decks = [d for v in self.secrets for d in ([v] if isinstance(v[0], str) else v) if len(d) >= 10]
        self.tokens: dict[int, str] = {s["seat"]: s["token"] for s in self.created["seats"] if "token" in s}
        self.admin_events: list[dict[str, Any]] = []
        #: the engine's state at each version, replayed from the admin's record when a bot's input needs it
        self.states = {0: start}
        #: each seat's legal moves as it read them at the last version judged
        self.seat_moves: dict[int, list[dict[str, Any]]] = {}
        self.judged_bot_calls = 0
        #: the last version every viewer was judged at
        self.judged = -1

    # --- helpers -----------------------------------------------------------
    def viewers(self) -> list[tuple[Seat, str | None]]:
        return [(None, None), *sorted(self.tokens.items())]

    def admin_view(self) -> dict[str, Any]:
        r = self.api.view(self.id, self.admin)
        assert r.status == 200, r
        return r.json

    def no_secret_option(self, body: JSON, where: str) -> None:
        """No list equal to a given deck (the match is not finished)."""
        for found in lists(body):
            assert found not in self.decks, f"{where}: a secret deck option is shown: {found}"

    def out(self, body: JSON, where: str) -> None:
        """Checks on every non-admin output before the end."""
        self.no_secret_option(body, where)

    def catch_up(self) -> dict[str, Any]:
        """Learn the admin's new events version by version, judging the bot's
        inputs at each version on the way; the admin view now."""
        r = self.api.events(self.id, self.admin, after=self.admin_events[-1]["version"] if self.admin_events else -1)
        assert r.status == 200, r
        fresh = r.json["events"]
        for version in sorted({e["version"] for e in fresh}):
            for event in fresh:
                if event["version"] == version:
                    self.model.learn(event)
            self.judge_bots(version)
        self.admin_events += fresh
        return self.admin_view()

    def state(self, version: int) -> Any:
        """The engine's state at ``version``, replaying the admin's record up to it."""
        if version not in self.states:
            for entry in self.api.record(self.id, self.admin).json["moves"]:
                v = entry["version"]
                if v not in self.states:
                    self.states[v] = self.game.play(self.states[v - 1], entry["seat"], entry["move"],
                                                    entry.get("by"))[0]
        return self.states[version]

    def judge_bots(self, version: int) -> None:
        """The bot's view at ``version`` by the model; its seed tells nothing of the match seed."""
        seed = self.plan["seed"]
        for call in self.bot_calls:
            if call["view"]["version"] != version:
                continue
            where = f"bot input at version {version}"
            state = self.state(version)
            judge_view(self.model, call["view"], self.game.view(state, ADMIN_VIEWER), call["seat"], where)
            assert call["moves"] == with_ids(self.game, self.game.legal_moves(state, call["seat"])), where
            self.out(call, where)
            bot_seed = call["seed"]
            guesses = {bot_seed, bot_seed // OLD_SEED_STEP, (bot_seed - version) // OLD_SEED_STEP, bot_seed - version}
            assert seed not in guesses, f"{where}: the bot's seed {bot_seed} yields the match seed {seed}"
            if not self.secrets:
                names = [f"p{i}" for i in range(self.plan["n"])]
                true_deal = self.game.view(self.state(0), ADMIN_VIEWER)
                for guess in guesses - {seed}:
                    if 0 <= guess <= SEED_MAX:  # a guess out of the seed range rebuilds nothing
                        rebuilt = self.game.view(self.game.create(names, guess, self.plan["options"])[0], ADMIN_VIEWER)
                        assert rebuilt != true_deal, f"{where}: seed {guess} rebuilds the deal"
            self.judged_bot_calls += 1

    # --- the judging -------------------------------------------------------
    def judge_start(self) -> None:
        """Create (spectator view), lobby entry, seat table, claim (seat 0's view)."""
        admin = self.catch_up()
        judge_view(self.model, self.created["state"], admin, None, "create response")
        self.out(self.created["state"], "create response")
        lobby = self.api.get("/v1/matches", params={"game": self.game.id, "open": "true", "limit": 100})
        assert lobby.status == 200, lobby
        entry = next(e for e in lobby.json["matches"] if e["match_id"] == self.id)
        judge_cardless(self.model, lobby.json, "lobby")
        self.out(lobby.json, "lobby")
        for option in self.game.options:
            given_value = self.plan["options"].get(option.name)
            if option.secret:
                assert entry["options"][option.name] == (None if given_value is None else HIDDEN_OPTION), entry
        seats = self.api.get(f"/v1/matches/{self.id}/seats")
        assert seats.status == 200
        judge_cardless(self.model, seats.json, "seat table")
        claim = self.api.post(f"/v1/matches/{self.id}/seats/0")
        assert claim.status == 201, claim
        self.tokens[0] = claim.json["token"]
        judge_view(self.model, claim.json["state"], self.admin_view(), 0, "claim response")
        self.out(claim.json, "claim response")

    def judge_version(self, admin: dict[str, Any]) -> None:
        """Every viewer's view, events, legal moves, a refusal and the record."""
        version, finished = admin["version"], admin["status"] == "finished"
        for seat, token in self.viewers():
            where = f"{self.game.id} v{version} viewer {seat}"
            view = self.api.view(self.id, token).json
            judge_view(self.model, view, admin, seat, f"{where} view")
            events = self.api.events(self.id, token, after=self.judged).json["events"]
            judge_events(self.model, events, [e for e in self.admin_events if e["version"] > self.judged], seat,
                         f"{where} events")
            refused = self.api.move(self.id, token, {"type": "no_such_move", "x": 1}, version)
            assert refused.status in (401, 409, 422), refused
            allowed = set(self.model.view_cards(admin, seat))
            assert quoted_cards(refused.body.decode(), self.model.vocab) <= allowed, f"{where} error: {refused}"
            judge_cardless(self.model, refused.json, f"{where} error")
            if not finished:
                record = self.api.record(self.id, token)
                assert record.status == (401 if token is None else 403), f"{where}: record {record}"
                judge_cardless(self.model, record.json, f"{where} record")
                for body in (view, events, refused.json):
                    self.out(body, where)
            if seat is not None:  # a seat's own moves only (they may name its hidden cards)
                moves = self.seat_moves[seat] = self.api.legal(self.id, token).json["moves"]
                assert moves == ([] if finished or seat not in admin["to_act"]
                                 else self.api.legal(self.id, self.admin, seat=seat).json["moves"]), where
                other = self.api.legal(self.id, token, seat=(seat + 1) % self.plan["n"])
                assert other.status == 403, f"{where}: another seat's moves {other}"
                judge_cardless(self.model, other.json, where)
        self.judged = version

    def play(self) -> None:
        """Random legal moves, judged at every version (or where the plan's
        ``judge`` says); then the end (at once where its ``stop`` says)."""
        rng: random.Random = self.plan["moves"]
        self.judge_start()
        admin = self.admin_view()
        self.judge_version(admin)
        prefer = self.plan.get("prefer", ())
        stop = self.plan.get("stop", lambda _judge: False)
        for _ in range(self.plan.get("max_moves", MAX_MOVES)):
            seats = [s for s in admin["to_act"] if s in self.tokens]
            if admin["status"] == "finished" or not seats or stop(self):
                break
            seat = rng.choice(seats)
            listed = self.seat_moves.get(seat) or self.api.legal(self.id, self.tokens[seat]).json["moves"]
            moves = [strip_label(m) for m in listed]
            move = next((m for m in moves if m["type"] in prefer), None) or rng.choice(moves)
            admin = self.respond(seat, self.api.move(self.id, self.tokens[seat], move, admin["version"]))
        while admin["status"] != "finished":
            seat = next(s for s in range(self.plan["n"]) if s != self.bot_seat and s in self.tokens
                        and all(e["seat"] != s for e in self.admin_events if e["type"] == "resigned"))
            admin = self.respond(seat, self.api.move(self.id, self.tokens[seat], {"type": "resign"}))
        self.judge_streams(admin)

    def respond(self, seat: int, r: Any) -> dict[str, Any]:
        """A move's response for its seat, then every viewer at the new
        version (unless the plan's ``judge`` skips it: the next judged
        version reads the events in between); the admin view now."""
        assert r.status == 200, r
        before = self.admin_events[-1]["version"]
        admin = self.catch_up()
        where = f"{self.game.id} move response of seat {seat}"
        judge_view(self.model, r.json["state"], admin, seat, where)
        judge_events(self.model, r.json["events"], [e for e in self.admin_events if e["version"] > before],
                     seat, where)
        if admin["status"] != "finished":
            self.out(r.json, where)
        self.seat_moves = {}
        if admin["status"] == "finished" or self.plan.get("judge", lambda _judge, _admin: True)(self, admin):
            self.judge_version(admin)
        return admin

    def judge_streams(self, admin: dict[str, Any]) -> None:
        """After the end: each viewer's whole NDJSON stream."""
        for seat, token in self.viewers():
            r = self.api.get(f"/v1/matches/{self.id}/stream", token=token, params={"after": -1, "state": "true"},
                             headers={"Accept": "application/x-ndjson"})
            assert r.status == 200, r
            messages = [json.loads(line) for line in r.body.splitlines() if line.strip()]
            assert [m["version"] for m in messages] == list(range(admin["version"] + 1))
            for message in messages:
                mine = [e for e in self.admin_events if e["version"] == message["version"]]
                judge_events(self.model, message["events"], mine, seat, f"stream v{message['version']}")
            judge_view(self.model, messages[-1]["state"], admin, seat, "stream state")


@pytest.mark.parametrize("game_id", GAMES)
def test_no_viewer_reads_more_than_the_rules_allow(embedded_api: Api, monkeypatch: pytest.MonkeyPatch,
                                                   game_id: str) -> None:
    game = _game(game_id)
    judged: list[Judge] = []

    @LEAKS
    @given(plan=match_plans(game))
    def run(plan: dict[str, Any]) -> None:
        with bot_spy(monkeypatch) as calls:
            judge = Judge(embedded_api, game, plan, calls)
            judge.play()
        judged.append(judge)

    run()
    assert sum(len(j.admin_events) for j in judged) > 10


def test_a_bot_is_judged(embedded_api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """A match with a server bot: every decision's inputs and seed are judged."""
    rng = random.Random(5)
    plan = {"n": 3, "seed": 77, "options": {"rounds": 1}, "bot": True, "moves": rng}
    with bot_spy(monkeypatch) as calls:
        judge = Judge(embedded_api, _game("biberbande"), plan, calls)
        judge.play()
    assert calls and judge.judged_bot_calls == len(calls)


def test_bot_seed_is_one_way() -> None:
    """Bots' seeds (bots.decision_seed): deterministic, different per game,
    seat and version, and none is the match seed or its old affine image."""
    rng = random.Random(23)
    for _ in range(200):
        seed, version, seat = rng.getrandbits(63), rng.randrange(10_000), rng.randrange(6)
        derived = bots.decision_seed(seed, "biberbande", seat, version)
        assert derived == bots.decision_seed(seed, "biberbande", seat, version)
        assert 0 <= derived < 2**63
        assert derived not in (seed, seed * OLD_SEED_STEP + version)
        assert seed not in ((derived - version) // OLD_SEED_STEP, derived // OLD_SEED_STEP)
        others = {bots.decision_seed(seed, "biberclan", seat, version),
                  bots.decision_seed(seed, "biberbande", seat + 1, version),
                  bots.decision_seed(seed, "biberbande", seat, version + 1)}
        assert derived not in others


#: ``--fast``: the long round's viewers are judged from this many cards left in the draw pile on, and the
#: match ends after this many draws from the reshuffled pile (the events in between are judged all the same)
FAST_LAST_CARDS = FAST_DRAWS_AFTER = 3


def _reshuffled(judge: Judge) -> list[str]:
    """The admin's event types since the round's first reshuffle (none yet: empty)."""
    types = [e["type"] for e in judge.admin_events]
    return types[types.index("reshuffled"):] if "reshuffled" in types else []


def test_long_round_with_reshuffle_never_leaks(embedded_api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Biberbande round long enough to empty the draw pile (BB-3.6): the
    reshuffled order stays hidden.  (A given deck cannot shorten the way
    there: whatever its order, 57 of the 66 cards are drawn first with 2 seats.)"""
    game = _game("biberbande")
    rng = random.Random(9)
    plan: dict[str, Any] = {"n": 2, "seed": 4242, "options": {"rounds": 1, "turn_limit": 40}, "bot": False,
                            "moves": rng, "prefer": ("draw", "end_turn"), "max_moves": 500}
    if conftest.FAST:
        plan["judge"] = lambda judge, admin: (admin["board"]["draw_count"] <= FAST_LAST_CARDS
                                              or bool(_reshuffled(judge)))
        plan["stop"] = lambda judge: _reshuffled(judge).count("drew") >= FAST_DRAWS_AFTER
    with bot_spy(monkeypatch) as calls:
        judge = Judge(embedded_api, game, plan, calls)
        judge.play()
    assert "reshuffled" in [e["type"] for e in judge.admin_events], "the draw pile never ran out"


def test_hidden_values_absent_from_error_bodies(embedded_api: Api) -> None:
    """api.md: nothing hidden may appear in errors: an illegal move of the seat
    holding a card does not echo the held card to anyone, and a wrong seat's
    refusal says nothing about the holder's options."""
    api = embedded_api
    m = api.create(2, seed=1, options=W1_OPTIONS)
    m.play(0, {"type": "take_discard", "slot": 3})
    m.play(1, {"type": "draw"})  # seat 1 holds "6"
    r = api.move(m.id, m.token(0), {"type": "swap_drawn", "slot": 0}, 2)
    assert r.status == 409 and r.json["code"] == "not_your_turn", r
    text = r.body.decode() + " ".join(r.headers.values())
    assert '"6"' not in text and "discard_drawn" not in text, r  # holder's card / options not revealed
    r = api.legal(m.id, m.token(0), seat=1)
    assert r.status == 403 and "discard_drawn" not in r.body.decode(), r
    moves = [strip_label(x) for x in m.legal(1)]
    assert {"type": "swap_drawn", "slot": 0} in moves


def test_recall_none_never_shows_known(embedded_api: Api) -> None:
    """BB-5.6: recall "none" → every `known` is null for every viewer, all match long."""
    api = embedded_api
    m = api.create(3, seed=9, options={"rounds": 1, "turn_limit": 3, "recall": "none"})
    rng = random.Random(4)
    steps = 0
    while m.admin_view()["status"] != "finished":
        v = m.admin_view()
        seat = v["to_act"][0]
        m.play(seat, rng.choice(m.legal(seat)))
        steps += 1
        for s in range(3):
            for p in m.seat_view(s)["players"]:
                assert p["known"] == [None] * 4, (s, p)
    assert steps > 3

