"""The example planning bot (arena/examples/montecarlo_bot.py) plays whole
matches over the public API alone: worlds for its seat and random playouts
through simulate (contract "Worlds and simulation"); any refused call makes
it exit, which the arena counts as a crash."""
from __future__ import annotations

from pathlib import Path

import pytest

from arena import tournament
from arena.entrants import Entrant
from devtools.servers import ROOT

pytestmark = pytest.mark.live

MONTECARLO_BOT = ROOT / "arena" / "examples" / "montecarlo_bot.py"


@pytest.mark.parametrize("game", ["biberbande", "mein-lieber-biber"])
def test_montecarlo_bot_plays_through_worlds_and_simulate(live_server: str, tmp_path: Path, game: str):
    entrants = [Entrant.parse(f"mc=cmd:python {MONTECARLO_BOT}"), Entrant.parse("heur=server:heuristic")]
    config = tournament.TournamentConfig(game=game, entrants=entrants, matches=1, seats=2, seed=3,
                                         parallel=1, duplicate=False, move_timeout=None, url=live_server)
    outcome, = tournament.run(config, out_dir=tmp_path, progress=False).outcomes
    mc = next(s for s in outcome.seats if s.entrant == "mc")
    assert mc.crashes == 0 and mc.timeouts == 0
    assert outcome.result["winners"]
