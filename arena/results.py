"""What a tournament shows: standings, ratings, files and a chart.

- Win rate: the share of an entrant's matches in which it is among the
  result's ``winners`` (a shared first place counts as a win), with a 95 %
  Wilson score interval.
- Ratings: openskill's Plackett–Luce model, every match rated in order from
  its places (ties shared).  ``mu`` ± 1.96 ``sigma`` is shown as the interval;
  entrants are ordered by the conservative ``ordinal`` (mu − 3 sigma).
"""
from __future__ import annotations

import csv
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson
from openskill.models import PlackettLuce

from .client import JSON
from .referee import MatchOutcome
from .tournament import TournamentRun, record_name

Z95 = 1.96


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Standing:
    bot: str
    kind: str
    matches: int
    wins: int
    win_rate: float
    win_low: float
    win_high: float
    mean_score: float
    mean_place: float
    timeouts: int
    crashes: int
    mu: float
    sigma: float
    ordinal: float

    @property
    def rating_low(self) -> float:
        return self.mu - Z95 * self.sigma

    @property
    def rating_high(self) -> float:
        return self.mu + Z95 * self.sigma


def ratings(names: list[str], outcomes: list[MatchOutcome]) -> dict[str, tuple[float, float, float]]:
    """name -> (mu, sigma, ordinal) after rating every match in order."""
    model = PlackettLuce()
    current = {name: model.rating(name=name) for name in names}
    for outcome in outcomes:
        teams = [[current[s.entrant]] for s in outcome.seats]
        rated = model.rate(teams, ranks=[s.place for s in outcome.seats])
        for s, (rating,) in zip(outcome.seats, rated):
            current[s.entrant] = rating
    return {name: (r.mu, r.sigma, r.ordinal()) for name, r in current.items()}


def standings(run: TournamentRun) -> list[Standing]:
    """One row per entrant, best conservative rating first."""
    names = [e.name for e in run.config.entrants]
    rated = ratings(names, run.outcomes)
    rows = []
    for entrant in run.config.entrants:
        seats = [s for o in run.outcomes for s in o.seats if s.entrant == entrant.name]
        n = len(seats)
        wins = sum(s.winner for s in seats)
        low, high = wilson(wins, n)
        mu, sigma, ordinal = rated[entrant.name]
        rows.append(Standing(
            bot=entrant.name, kind=entrant.kind, matches=n, wins=wins, win_rate=wins / n if n else 0.0,
            win_low=low, win_high=high,
            mean_score=sum(s.score for s in seats) / n if n else 0.0,
            mean_place=sum(s.place for s in seats) / n if n else 0.0,
            timeouts=sum(s.timeouts for s in seats), crashes=sum(s.crashes for s in seats),
            mu=mu, sigma=sigma, ordinal=ordinal))
    return sorted(rows, key=lambda r: -r.ordinal)


def table(rows: list[Standing]) -> str:
    """The standings as a plain-text table."""
    head = ["bot", "matches", "wins", "win rate (95% CI)", "mean score", "mean place",
            "timeouts", "crashes", "rating mu ± 1.96σ"]
    body = [[r.bot, str(r.matches), str(r.wins),
             f"{r.win_rate:.1%} ({r.win_low:.1%}–{r.win_high:.1%})",
             f"{r.mean_score:.2f}", f"{r.mean_place:.2f}", str(r.timeouts), str(r.crashes),
             f"{r.mu:.1f} ± {Z95 * r.sigma:.1f}"] for r in rows]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths)))
             for line in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write(run: TournamentRun, rows: list[Standing], out_dir: Path) -> dict[str, Path]:
    """results.json, results.csv (standings), matches.csv (one row per
    match and seat) and ratings.png in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / "results.json", "csv": out_dir / "results.csv",
             "matches": out_dir / "matches.csv", "chart": out_dir / "ratings.png"}
    summary: JSON = {
        "config": run.config.to_json(), "matches": len(run.outcomes), "interrupted": run.interrupted,
        "seconds": round(run.seconds, 3),
        "matches_per_minute": round(run.matches_per_minute, 2),
        "standings": [{**asdict(r), "rating_low": r.rating_low, "rating_high": r.rating_high} for r in rows],
        "outcomes": [o.to_json() | {"record": f"records/{record_name(o.index)}"} for o in run.outcomes]}
    paths["json"].write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2))
    with open(paths["csv"], "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*asdict(rows[0]).keys(), "rating_low", "rating_high"])
        for r in rows:
            writer.writerow([*asdict(r).values(), r.rating_low, r.rating_high])
    with open(paths["matches"], "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["match", "deal", "seed", "match_id", "moves", "seat", "bot", "score", "place",
                         "winner", "timeouts", "crashes"])
        for o in run.outcomes:
            for s in o.seats:
                writer.writerow([o.index, o.deal, o.seed, o.match_id, o.moves, s.seat, s.entrant, s.score,
                                 s.place, int(s.winner), s.timeouts, s.crashes])
    chart(run, rows, paths["chart"])
    return paths


def chart(run: TournamentRun, rows: list[Standing], path: Path) -> None:
    """A PNG of every entrant's rating with its 95 % interval."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    ordered = list(reversed(rows))  # best at the top
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.5 * len(rows)))
    ax.errorbar([r.mu for r in ordered], range(len(ordered)), xerr=[Z95 * r.sigma for r in ordered],
                fmt="o", capsize=4)
    ax.set_yticks(range(len(ordered)), [f"{r.bot} ({r.win_rate:.0%} wins)" for r in ordered])
    ax.set_xlabel("openskill rating μ ± 1.96σ")
    ax.set_title(f"{run.config.game}: {len(run.outcomes)} matches, {run.config.seats} seats"
                 + (", duplicate" if run.config.duplicate else ""))
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
