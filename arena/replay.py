"""Replay a kept match: a fresh match from the record's game, players, seed
and options, then every logged move posted as the admin for its seat with the
version it was played at.  The same inputs give the same match, so the result
must come out equal."""
from __future__ import annotations

from .client import JSON, LodgeClient


def replay(client: LodgeClient, record: JSON, *, keep: bool = False) -> JSON:
    """Replay ``record`` (as GET record returns it) and return the new
    match's result."""
    created = client.create(record["game"], record["players"], seed=record["seed"], options=record["options"])
    for entry in record["moves"]:
        client.move(created.match_id, created.admin_token, entry["move"], version=entry["version"] - 1,
                    seat=entry["seat"])
    result = client.view(created.match_id, created.admin_token)["result"]
    if not keep:
        client.delete(created.match_id, created.admin_token)
    return result
