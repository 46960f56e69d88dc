"""A tournament: many matches of one game between entrants, in parallel.

Scheduling (all from the tournament seed, so a run can be repeated):

- each *deal* has its own match seed, which fixes every shuffle of the match;
- a deal's lineup is all entrants when there are as many as seats (seat order
  rotating from deal to deal), else a seeded sample of them;
- ``duplicate``: every deal is played once per seat rotation (the lineup
  shifted by one seat each time) with the same seed, so each entrant of the
  lineup gets each seat's cards once and luck cancels out.  ``matches`` is
  then rounded up to a whole number of deals.
"""
from __future__ import annotations

import dataclasses
import math
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from tqdm import tqdm

import bots
from bots import ISMCTS, bot_class

from .client import DEFAULT_URL, JSON, LodgeClient
from .entrants import WEBHOOK, Entrant
from .ladder import ServerLadder
from .referee import MAX_CLOCK, MIN_CLOCK, MatchOutcome, MatchPlan, Referee

SEED_BITS = 53  # match seeds are 0 … 2^53−1 (api.md 1.2)


def derive_seed(*parts: object) -> int:
    """A 53-bit seed from the tournament seed and a position in it
    (:func:`bots.derive_seed`)."""
    return bots.derive_seed("lodge-arena", *parts, bits=SEED_BITS)


@dataclass(frozen=True)
class TournamentConfig:
    game: str
    entrants: list[Entrant]
    matches: int
    seats: int
    seed: int = 0
    parallel: int = 2
    duplicate: bool = False
    move_timeout: float | None = 10.0
    options: JSON = field(default_factory=dict)
    url: str = DEFAULT_URL
    keep_matches: bool = False
    ladder: ServerLadder | None = None  # every match a match of this server ladder

    def to_json(self) -> JSON:
        return {"game": self.game, "entrants": [e.describe() for e in self.entrants],
                "matches": self.matches, "seats": self.seats, "seed": self.seed,
                "parallel": self.parallel, "duplicate": self.duplicate,
                "move_timeout": self.move_timeout, "options": self.options, "url": self.url,
                **({} if self.ladder is None else {"ladder": self.ladder.ladder_id})}


def check(config: TournamentConfig, catalogue_entry: JSON) -> None:
    """ValueError with a sentence for anything that cannot be played."""
    names = [e.name for e in config.entrants]
    if len(set(names)) != len(names):
        raise ValueError(f"bot names must differ: {', '.join(names)}")
    low, high = catalogue_entry["min_players"], catalogue_entry["max_players"]
    if not low <= config.seats <= high:
        raise ValueError(f"{config.game} takes {low}…{high} players; --seats is {config.seats}")
    if config.seats > len(config.entrants):
        raise ValueError(f"{config.seats} seats need at least {config.seats} bots; got {len(names)}")
    if config.matches < 1 or config.parallel < 1:
        raise ValueError("--matches and --parallel must be at least 1")
    if config.move_timeout is not None and not MIN_CLOCK <= config.move_timeout <= MAX_CLOCK:
        raise ValueError(f"--move-timeout is the server's clock: 0 (none) or {MIN_CLOCK:g}…{MAX_CLOCK:g} "
                         f"seconds; got {config.move_timeout:g}")
    for entrant in config.entrants:
        # a webhook is the bot's own service; whether the server plays ismcts only the server says
        if not entrant.external and entrant.kind != WEBHOOK and entrant.server_bot != ISMCTS:
            bot_class(entrant.server_bot or entrant.kind, config.game)


def schedule(config: TournamentConfig) -> list[MatchPlan]:
    """Every match of the tournament, in order."""
    k, entrants = config.seats, config.entrants
    per_deal = k if config.duplicate else 1
    deals = math.ceil(config.matches / per_deal)
    plans: list[MatchPlan] = []
    for deal in range(deals):
        seed = derive_seed(config.seed, "deal", deal)
        if len(entrants) == k:
            lineup = entrants[deal % k:] + entrants[:deal % k]
        else:
            lineup = random.Random(derive_seed(config.seed, "lineup", deal)).sample(entrants, k)
        for rotation in range(per_deal):
            index = len(plans)
            plans.append(MatchPlan(index=index, deal=deal, seed=seed,
                                   lineup=lineup[rotation:] + lineup[:rotation],
                                   bot_seeds=[derive_seed(config.seed, "bot", index, s) for s in range(k)]))
    return plans


@dataclass
class TournamentRun:
    config: TournamentConfig
    outcomes: list[MatchOutcome]
    seconds: float
    interrupted: bool = False  # Ctrl-C: the outcomes are the matches that ended

    @property
    def matches_per_minute(self) -> float:
        return 60 * len(self.outcomes) / self.seconds if self.seconds else 0.0


def run(config: TournamentConfig, *, out_dir: Path | None = None, progress: bool = True) -> TournamentRun:
    """Play every scheduled match, ``parallel`` at a time.  With ``out_dir``
    each match's record is written to ``records/`` as soon as it ends, and
    external bots' output to ``logs/``; the outcomes returned hold results,
    not records, so a run of many thousand matches stays small in memory."""
    with LodgeClient(config.url) as client:
        check(config, client.game(config.game))
    plans = schedule(config)
    records = logs = None
    if out_dir is not None:
        records, logs = out_dir / "records", out_dir / "logs"
        records.mkdir(parents=True, exist_ok=True)
        if any(e.external for e in config.entrants):
            logs.mkdir(parents=True, exist_ok=True)
    local = threading.local()
    clients: list[LodgeClient] = []

    def referee() -> Referee:
        if not hasattr(local, "referee"):
            client = LodgeClient(config.url)
            clients.append(client)
            local.referee = Referee(client, config.game, options=config.options,
                                    move_timeout=config.move_timeout, logs=logs,
                                    keep_matches=config.keep_matches, ladder=config.ladder)
        return local.referee

    def play(plan: MatchPlan) -> MatchOutcome:
        outcome = referee().play(plan)
        if records is not None:
            (records / record_name(plan.index)).write_bytes(
                orjson.dumps(outcome.to_json(), option=orjson.OPT_INDENT_2))
        return dataclasses.replace(outcome, record=None)  # kept on disk, not in memory

    started = time.monotonic()
    interrupted = False
    try:
        with ThreadPoolExecutor(max_workers=config.parallel, thread_name_prefix="match") as pool, \
                tqdm(total=len(plans), unit="match", disable=not progress, desc=config.game) as bar:
            futures = [pool.submit(play, plan) for plan in plans]
            try:
                for future in as_completed(futures):
                    future.result()  # a failed match stops the tournament
                    bar.update()
            except KeyboardInterrupt:  # Ctrl-C: finish the matches under way, keep what was played
                interrupted = True
                for f in futures:
                    f.cancel()
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
    finally:
        for client in clients:
            client.close()
    outcomes = [f.result() for f in futures if f.done() and not f.cancelled() and f.exception() is None]
    return TournamentRun(config, outcomes, time.monotonic() - started, interrupted)


def record_name(index: int) -> str:
    return f"match-{index:05d}.json"


def iter_records(out_dir: Path) -> Iterator[JSON]:
    """The kept matches of a tournament directory, in order."""
    for path in sorted((out_dir / "records").glob("match-*.json")):
        yield orjson.loads(path.read_bytes())
