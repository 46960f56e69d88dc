"""Replay a kept match: a fresh match from the record's game, players, seed
and options, then every logged move posted as the admin for its seat with the
version it was played at.  The same inputs give the same match, so the result
must come out equal.  The players are names, so the seats of the new match
are token seats: the moves a bot seat or the clock made (``"by": "bot"`` /
``"clock"``) are posted like the others; only the moves the server plays for
a resigned seat (``"by": "resigned"``) are left out, since the new match plays
them itself right after the resign."""
from __future__ import annotations

from .client import JSON, LodgeClient

#: Record entries the server plays on its own in the replayed match too.
BY_RESIGNED = "resigned"


def replay(client: LodgeClient, record: JSON, *, keep: bool = False) -> JSON:
    """Replay ``record`` (as GET record returns it) and return the new
    match's result."""
    created = client.create(record["game"], record["players"], seed=record["seed"], options=record["options"])
    for entry in record["moves"]:
        if entry.get("by") != BY_RESIGNED:
            client.move(created.match_id, created.admin_token, entry["move"], version=entry["version"] - 1,
                        seat=entry["seat"])
    result = client.view(created.match_id, created.admin_token)["result"]
    if not keep:
        client.delete(created.match_id, created.admin_token)
    return result
