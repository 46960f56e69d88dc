"""A tournament into a rating ladder on the server (``tournament --ladder``).

The harness creates the ladder, registers every entrant and creates each
match as a ladder match; the server rates every finished match once
(api.md "Ladders: ratings on the server") and its leaderboard is printed
beside the harness's own standings.
"""
from __future__ import annotations

from dataclasses import dataclass

from .client import JSON, LodgeClient
from .entrants import Entrant


@dataclass(frozen=True)
class ServerLadder:
    """A ladder on the server and the entrant id of each entrant name."""

    ladder_id: str
    admin_token: str
    entrants: dict[str, str]

    def ref(self) -> JSON:
        """A create request's ``ladder``."""
        return {"id": self.ladder_id, "token": self.admin_token}

    def to_json(self) -> JSON:
        return {"ladder_id": self.ladder_id, "admin_token": self.admin_token, "entrants": self.entrants}


def open_ladder(client: LodgeClient, game: str, name: str, entrants: list[Entrant]) -> ServerLadder:
    """A new ladder of ``game`` with every entrant registered."""
    created = client.create_ladder(game, name)
    ids = {e.name: client.add_entrant(created["ladder_id"], created["admin_token"], e.name)["entrant_id"]
           for e in entrants}
    return ServerLadder(created["ladder_id"], created["admin_token"], ids)


def table(board: JSON) -> str:
    """The server's leaderboard as text."""
    lines = [f"server ladder {board['ladder_id']} ({board['name']}): {board['matches']} matches rated",
             f"{'rank':>4}  {'entrant':<20} {'rating':>7} {'mu':>7} {'sigma':>6} {'matches':>7} {'wins':>5}"]
    for e in board["entrants"]:
        lines.append(f"{e['rank']:>4}  {e['name'][:20]:<20} {e['rating']:>7.2f} {e['mu']:>7.2f} "
                     f"{e['sigma']:>6.2f} {e['matches']:>7} {e['wins']:>5}")
    return "\n".join(lines)
