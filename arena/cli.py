"""``lodge-arena``: tournaments, single matches and replays against a Lodge
server (default: the local ``make run`` at http://127.0.0.1:8000); see
:data:`EXAMPLES`.  Bots are ``NAME=random``, ``NAME=heuristic``,
``NAME=server:heuristic`` (played by the server), ``NAME=cmd:"python
mybot.py"`` or ``NAME=webhook:URL`` (:mod:`arena.entrants`); a bare kind is
named after itself.
``play --bots heuristic,random`` seats a person at the terminal against
server bots (:mod:`arena.human`).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from bots import KINDS

from . import human, ladder, results, tournament
from .client import DEFAULT_URL, LodgeClient, LodgeError, Unreachable
from .entrants import Entrant
from .ladder import ServerLadder
from .referee import MatchPlan, Referee
from .replay import replay
from .show import LEGEND, event_line, view_lines

DEFAULT_BOTS = ["random", "heuristic"]
INTERRUPTED = 130  # the shell's code for Ctrl-C
GAMES = "biberbande, biberclan, mein-lieber-biber or thirteen-beavers"
EXAMPLES = """examples (with `make run` serving):
  lodge-arena tournament biberbande --bot random --bot heuristic --matches 100 --duplicate
  lodge-arena tournament biberclan --bot h=heuristic --bot mine=cmd:"python mybot.py" --matches 30
  lodge-arena tournament thirteen-beavers --bot mine=heuristic --bot theirs=server:heuristic
  lodge-arena tournament biberbande --bot a=heuristic --bot b=server:random --matches 50 --ladder weekly
  lodge-arena play mein-lieber-biber --bot ana=heuristic --bot bo=random
  lodge-arena play biberbande --bots heuristic,random --clock 30   # you against two server bots
  lodge-arena replay arena-results/biberbande-*/records/match-00007.json"""


def _options(text: str) -> dict:
    try:
        options = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"--options must be a JSON object: {exc}") from exc
    if not isinstance(options, dict):
        raise argparse.ArgumentTypeError("--options must be a JSON object")
    return options


def _entrant(text: str) -> Entrant:
    try:
        return Entrant.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _timeout(text: str) -> float | None:
    seconds = float(text)
    return None if seconds <= 0 else seconds


def _kinds(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",")]
    for kind in kinds:
        if kind not in KINDS:
            raise argparse.ArgumentTypeError(f"--bots: unknown kind {kind!r}; use {', '.join(KINDS)}")
    return kinds


def _default_url() -> str:
    """``LODGE_URL`` from the environment, else the local ``make run``."""
    return os.environ.get("LODGE_URL") or DEFAULT_URL


def parser() -> argparse.ArgumentParser:
    url = _default_url()
    url_help = f"Lodge server (default: $LODGE_URL, else {DEFAULT_URL}, where `make run` serves; now {url})"
    top = argparse.ArgumentParser(
        prog="lodge-arena", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Tournaments, single matches and replays against a Lodge server.",
        epilog=EXAMPLES)
    sub = top.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--url", default=url, help=url_help)
        p.add_argument("--bot", dest="bots", action="append", type=_entrant, metavar="NAME=KIND",
                       help="an entrant: NAME=random, NAME=heuristic (in this process), NAME=server:random, "
                            "NAME=server:heuristic (played by the server), NAME=ismcts (a server bot seat; the "
                            "server must enable it), NAME=cmd:\"program args\", "
                            "NAME=webhook:URL (the server calls it; secret in LODGE_WEBHOOK_SECRET) "
                            "(repeat; default: random and heuristic)")
        p.add_argument("--seed", type=int, default=0, help="seed of every deal and bot (default 0)")
        p.add_argument("--options", type=_options, default={}, help="game options as a JSON object")
        p.add_argument("--move-timeout", type=_timeout, default=10.0, metavar="SECONDS",
                       help="the server's clock per decision (1…86400): a bot slower than this gets "
                            "its fallback move played by the server (default 10; 0 = no clock, wait forever)")

    t = sub.add_parser("tournament", help="many matches: standings, ratings, JSON/CSV and a chart")
    t.add_argument("game", help=GAMES)
    common(t)
    t.add_argument("--matches", type=int, default=100, help="number of matches (default 100)")
    t.add_argument("--seats", type=int, help="seats per match (default: number of bots, up to the game's maximum)")
    t.add_argument("--parallel", type=int, default=2, help="matches played at once (default 2)")
    t.add_argument("--duplicate", action="store_true",
                   help="play every deal once per seat rotation so luck cancels out")
    t.add_argument("--out", type=Path, help="results folder (default arena-results/<game>-<time>)")
    t.add_argument("--keep-matches", action="store_true", help="leave the matches on the server")
    t.add_argument("--ladder", nargs="?", const="", metavar="NAME",
                   help="rate the matches on the server too: a new server ladder (named NAME, default the "
                        "results folder's name) with every bot registered; its leaderboard is printed and "
                        "its id and tokens written to ladder.json")
    t.add_argument("--quiet", action="store_true", help="no progress bar")

    p = sub.add_parser("play", help="one match: watch bots (--bot) or play against server bots (--bots)")
    p.add_argument("game", help=GAMES)
    common(p)
    p.add_argument("--delay", type=float, default=0.0, help="seconds to pause after each move")
    p.add_argument("--bots", dest="against", type=_kinds, metavar="KIND,KIND…",
                   help="play yourself, at the terminal, against these server bots (random, heuristic)")
    p.add_argument("--name", default="you", help="your name (with --bots; default: you)")
    p.add_argument("--seat", type=int, default=0, help="your seat (with --bots; default 0)")
    p.add_argument("--clock", type=_timeout, metavar="SECONDS",
                   help="with --bots: seconds per decision before the server plays your fallback move "
                        "(default: no clock)")

    r = sub.add_parser("replay", help="replay kept match records and check their results")
    r.add_argument("records", nargs="+", type=Path)
    r.add_argument("--url", default=url, help=url_help)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "play" and args.against and args.bots:
        parser().error("play: --bots (you against server bots) and --bot (bots only) do not mix")
    if args.command != "replay" and not args.bots:
        args.bots = [Entrant.parse(kind) for kind in DEFAULT_BOTS]
    try:
        return {"tournament": cmd_tournament, "play": cmd_play, "replay": cmd_replay}[args.command](args)
    except Unreachable:
        print(f"lodge-arena: no Lodge server answers at {args.url}; start one with `make run`, "
              "or name a running one with --url or LODGE_URL", file=sys.stderr)
        return 1
    except (ValueError, LodgeError) as exc:
        print(f"lodge-arena: {exc}", file=sys.stderr)
        return 2


def cmd_tournament(args: argparse.Namespace) -> int:
    with LodgeClient(args.url) as client:
        entry = client.game(args.game)
    seats = args.seats or min(len(args.bots), entry["max_players"])
    out = args.out or Path("arena-results") / f"{args.game}-{time.strftime('%Y%m%d-%H%M%S')}"
    config = tournament.TournamentConfig(
        game=args.game, entrants=args.bots, matches=args.matches, seats=seats, seed=args.seed,
        parallel=args.parallel, duplicate=args.duplicate, move_timeout=args.move_timeout,
        options=args.options, url=args.url, keep_matches=args.keep_matches)
    if args.ladder is not None:
        config = dataclasses.replace(config, ladder=_server_ladder(config, args.ladder or out.name, out))
    run = tournament.run(config, out_dir=out, progress=not args.quiet)
    if not run.outcomes:
        print("lodge-arena: interrupted before any match ended", file=sys.stderr)
        return INTERRUPTED
    rows = results.standings(run)
    paths = results.write(run, rows, out)
    if run.interrupted:
        print(f"interrupted: the results below are the {len(run.outcomes)} matches that ended")
    print(f"{args.game}: {len(run.outcomes)} matches in {run.seconds:.1f} s "
          f"({run.matches_per_minute:.1f} matches/min), {seats} seats"
          + (", duplicate" if args.duplicate else ""))
    print(results.table(rows))
    if config.ladder is not None:
        with LodgeClient(args.url) as client:
            print(ladder.table(client.ladder(config.ladder.ladder_id)))
    print("written: " + ", ".join(str(p) for p in paths.values()) + f", {out / 'records'}/")
    return INTERRUPTED if run.interrupted else 0


def _server_ladder(config: tournament.TournamentConfig, name: str, out: Path) -> ServerLadder:
    """A new server ladder with the tournament's bots, saved to ``ladder.json`` in ``out``."""
    with LodgeClient(config.url) as client:
        tournament.check(config, client.game(config.game))
        server = ladder.open_ladder(client, config.game, name, config.entrants)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ladder.json").write_bytes(orjson.dumps(server.to_json(), option=orjson.OPT_INDENT_2))
    return server


def cmd_play(args: argparse.Namespace) -> int:
    if args.against:
        return cmd_play_human(args)
    with LodgeClient(args.url) as client:
        entry = client.game(args.game)
        lineup = args.bots[:entry["max_players"]]
        seen = {"version": -1}
        print(LEGEND)

        def show(match_id: str, version: int) -> None:
            view = client.view(match_id)  # no token: the spectator's view
            names = [p["name"] for p in view["players"]]
            for event in client.events(match_id, after=seen["version"]).events:
                print(event_line(event, names))
            seen["version"] = view["version"]
            print("\n".join(view_lines(view)), flush=True)
            if args.delay:
                time.sleep(args.delay)

        referee = Referee(client, args.game, options=args.options, move_timeout=args.move_timeout,
                          observer=show)
        outcome = referee.play(MatchPlan(index=0, deal=0, seed=args.seed, lineup=lineup,
                                         bot_seeds=[tournament.derive_seed(args.seed, "bot", 0, s)
                                                    for s in range(len(lineup))]))
    print(f"\n{args.game} match {outcome.match_id}: {outcome.moves} moves")
    for s in sorted(outcome.seats, key=lambda s: s.place):
        print(f"  {s.place}. {s.entrant} (seat {s.seat}) score {s.score}"
              + (f", {s.timeouts} timeouts" if s.timeouts else "") + (f", {s.crashes} crashes" if s.crashes else ""))
    return 0


def cmd_play_human(args: argparse.Namespace) -> int:
    table = human.Table(game=args.game, bots=args.against, name=args.name, seat=args.seat, seed=args.seed,
                        options=args.options, clock=args.clock)
    with LodgeClient(args.url) as client:
        try:
            view = human.play(client, table, ask=input, say=print)
        except (EOFError, KeyboardInterrupt):
            print("\nlodge-arena: stopped before the end; the match stays on the server", file=sys.stderr)
            return INTERRUPTED
    print(f"\n{args.game} match {view['match_id']}: finished")
    print("\n".join(human.summary(view)))
    return 0


RECORD_KEYS = ("game", "players", "seed", "options", "moves", "result")


def load_record(path: Path) -> dict[str, Any]:
    """A kept match record (a tournament's file or a bare GET record);
    ValueError with one line saying what is wrong with the file."""
    try:
        kept = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON ({exc}); expected a match record") from None
    record = kept.get("record", kept) if isinstance(kept, dict) else None
    if not isinstance(record, dict) or any(key not in record for key in RECORD_KEYS):
        raise ValueError(f"{path} is not a match record: it needs " + ", ".join(RECORD_KEYS)
                         + " (as GET /v1/matches/{id}/record returns them)")
    return record


def cmd_replay(args: argparse.Namespace) -> int:
    failed = 0
    records = [(path, load_record(path)) for path in args.records]  # every file checked before any replay
    with LodgeClient(args.url) as client:
        for path, record in records:
            again = replay(client, record)
            same = again == record["result"]
            failed += not same
            print(f"{path}: {'same result' if same else 'DIFFERENT result'} "
                  f"(winners {again['winners']}, scores {again['scores']})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
