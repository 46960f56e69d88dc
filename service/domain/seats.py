"""Who holds each seat: the create request's players, invites and claims.

A seat is one of four kinds (api.md "Seats, invites and the lobby"):

* ``token``: the creator got its bearer token in the 201;
* ``open``: nobody holds it yet; it is claimed with the match's invite
  (anyone may claim it in a public match) and then becomes
* ``claimed``: its token went to the claimant (``POST …/seats/{k}``);
* ``bot``: the server makes its decisions (``random`` or ``heuristic``);
* ``webhook`` (1.2): an HTTP service the server calls makes them
  (:mod:`service.domain.webhooks`); its url and secret are never shown.

The create request names them in ``players``: a display name (a ``token``
seat), ``{"name"}`` (the same), ``{"name", "open": true}`` or ``{"name",
"bot": "random" | "heuristic"}``, ``{"name", "webhook": {"url",
"secret"}}``, or just a player count (names ``Player
1…n``, all ``token``).  Everything wrong with ``players``, ``public`` or
``clock`` is 422 ``invalid_options`` with a sentence saying what.

The invite is a secret (32 random bytes, url-safe base64) handed out once,
in the 201; only its SHA-256 is kept (:attr:`service.store.store.Meta.invite_hash`).
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from engine.core import Game
from service.domain.webhooks import checked_hook
from service.http.errors import ApiError, clip
from service.http.schemas import BANK_MAX_MS, BOT_NAMES, CLOCK_MAX_MS, CLOCK_MIN_MS, DELAY_MAX, MAX_NAME
from service.ops.webhook_http import HostPolicy

TOKEN, OPEN, CLAIMED, BOT, WEBHOOK = "token", "open", "claimed", "bot", "webhook"
KINDS = (TOKEN, OPEN, CLAIMED, BOT, WEBHOOK)
_PLAYER_KEYS = ("name", "open", "bot", "webhook")


@dataclass(frozen=True)
class Seating:
    """The seats a create request asks for, checked."""

    names: list[str]
    kinds: list[str]
    bots: list[str | None]
    #: per seat, a webhook seat's ``{"url", "secret"}`` (None for the others)
    hooks: list[dict[str, str] | None] = field(default_factory=list)

    @property
    def has_open(self) -> bool:
        return OPEN in self.kinds


def seating(game: Game, players: Any, hosts: HostPolicy | None = None) -> Seating:
    """The seats of ``players`` (a count, or a list of names and player
    objects) for ``game``, webhooks on ``hosts``; 422 ``invalid_options``
    when they are wrong."""
    limits = f"{game.id} takes {game.min_players}…{game.max_players} players"
    if isinstance(players, int) and not isinstance(players, bool):
        if not game.min_players <= players <= game.max_players:
            raise ApiError("invalid_options", f"{limits}, got {players}")
        return Seating([f"Player {i + 1}" for i in range(players)], [TOKEN] * players, [None] * players)
    if not isinstance(players, list) or not all(isinstance(p, (str, dict)) for p in players):
        raise ApiError("invalid_options", "players must be a list of display names or player objects "
                       "({\"name\": …, \"open\": true} or {\"name\": …, \"bot\": …}), or a player count")
    if not game.min_players <= len(players) <= game.max_players:
        raise ApiError("invalid_options", f"{limits}, got {len(players)}")
    seats = [_seat(p, hosts or HostPolicy()) for p in players]
    names = [name for name, _, _, _ in seats]
    _check_names(names)
    return Seating(names, [kind for _, kind, _, _ in seats], [bot for _, _, bot, _ in seats],
                   [hook for _, _, _, hook in seats])


def _seat(player: str | dict[str, Any], hosts: HostPolicy) -> tuple[str, str, str | None, dict[str, str] | None]:
    """(name, kind, bot, webhook) of one element of ``players``."""
    if isinstance(player, str):
        return player, TOKEN, None, None
    unknown = [k for k in player if k not in _PLAYER_KEYS]
    if unknown:
        raise ApiError("invalid_options", f"a player object has only 'name', 'open', 'bot' and 'webhook'; "
                       f"{clip(str(unknown[0]))!r} is not one of them")
    name = player.get("name")
    if not isinstance(name, str):
        raise ApiError("invalid_options", "a player object needs a 'name' (a string)")
    is_open, bot = player.get("open", False), player.get("bot")
    if not isinstance(is_open, bool):
        raise ApiError("invalid_options", f"player {clip(name)!r}: 'open' must be true or false")
    if bot is not None and (not isinstance(bot, str) or bot not in BOT_NAMES):
        shown = clip(bot) if isinstance(bot, str) else bot
        raise ApiError("invalid_options", f"player {clip(name)!r}: there is no bot {shown!r}; "
                       f"known bots: {', '.join(BOT_NAMES)}")
    if is_open and bot is not None:
        raise ApiError("invalid_options", f"player {clip(name)!r} is either open (for someone to claim) "
                       "or a bot, not both")
    if "webhook" in player:
        if is_open or bot is not None:
            raise ApiError("invalid_options", f"player {clip(name)!r} is either a webhook or open or a bot, "
                           "not several")
        return name, WEBHOOK, None, checked_hook(name, player["webhook"], hosts)
    if bot is not None:
        return name, BOT, bot, None
    return name, OPEN if is_open else TOKEN, None, None


def _check_names(names: list[str]) -> None:
    """1…MAX_NAME printable characters, not blank, all different."""
    for name in names:
        if not name.strip() or len(name) > MAX_NAME:
            raise ApiError("invalid_options", f"a player name must be 1…{MAX_NAME} characters, not blank")
        if any(unicodedata.category(ch) == "Cc" for ch in name):
            raise ApiError("invalid_options", f"player name {clip(name)!r} contains a control character "
                           "(such as NUL, tab or newline); names are printable text")
    if len(set(names)) < len(names):
        twice = next(n for i, n in enumerate(names) if n in names[:i])
        raise ApiError("invalid_options", f"player names must differ; {clip(twice)!r} is given twice")


def clock_ms(clock: Any) -> int | None:
    """``clock.per_move_ms`` of a create request (None: no clock)."""
    if clock is None:
        return None
    if not isinstance(clock, dict) or "per_move_ms" not in clock or not set(clock) <= {"per_move_ms", "bank_ms"}:
        raise ApiError("invalid_options", "clock must be {\"per_move_ms\": milliseconds} or {\"per_move_ms\": …, "
                       "\"bank_ms\": milliseconds} (or null for none)")
    ms = clock["per_move_ms"]
    if not isinstance(ms, int) or isinstance(ms, bool) or not CLOCK_MIN_MS <= ms <= CLOCK_MAX_MS:
        raise ApiError("invalid_options", f"clock.per_move_ms must be an integer from {CLOCK_MIN_MS:,} "
                       f"to {CLOCK_MAX_MS:,} (one second to one day)")
    return ms


def bank_ms(clock: Any) -> int:
    """``clock.bank_ms`` of a create request checked by :func:`clock_ms`
    (0: no time bank)."""
    ms = clock.get("bank_ms", 0) if isinstance(clock, dict) else 0
    if not isinstance(ms, int) or isinstance(ms, bool) or not 0 <= ms <= BANK_MAX_MS:
        raise ApiError("invalid_options", f"clock.bank_ms must be an integer from 0 to {BANK_MAX_MS:,} (one hour)")
    return ms


def spectator_delay(spectators: Any) -> int:
    """``spectators.delay`` of a create request, in versions (0: none)."""
    if spectators is None:
        return 0
    if not isinstance(spectators, dict) or not set(spectators) <= {"delay"}:
        raise ApiError("invalid_options", "spectators must be {\"delay\": versions} (or null)")
    delay = spectators.get("delay", 0)
    if not isinstance(delay, int) or isinstance(delay, bool) or not 0 <= delay <= DELAY_MAX:
        raise ApiError("invalid_options", f"spectators.delay must be an integer from 0 to {DELAY_MAX:,} (versions)")
    return delay


def flag(name: str, value: Any) -> bool:
    """A true-or-false field ``name`` of a create request (``public``,
    ``referee``; absent or null: false)."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ApiError("invalid_options", f"{name} must be true or false")
    return value


def new_invite() -> str:
    return secrets.token_urlsafe(32)


def invite_hash(invite: str) -> str:
    return hashlib.sha256(invite.encode()).hexdigest()


def invite_matches(invite: Any, stored: str | None) -> bool:
    """Whether ``invite`` is the match's (compared in constant time)."""
    if stored is None or not isinstance(invite, str):
        return False
    return hmac.compare_digest(invite_hash(invite), stored)


def created_seats(seats: Seating, tokens: list[str | None]) -> list[dict[str, Any]]:
    """The 201's ``seats``: a token per token seat, ``open`` / ``bot`` /
    ``webhook`` markers otherwise (never a webhook's url or secret)."""
    out: list[dict[str, Any]] = []
    for i, (name, kind, bot, token) in enumerate(zip(seats.names, seats.kinds, seats.bots, tokens)):
        entry: dict[str, Any] = {"seat": i, "name": name}
        if kind == OPEN:
            entry["open"] = True
        elif kind == BOT:
            entry["bot"] = bot
        elif kind == WEBHOOK:
            entry["webhook"] = True
        else:
            entry["token"] = token
        out.append(entry)
    return out


def table(meta: Any) -> list[dict[str, Any]]:
    """``GET …/seats``' seats of ``meta`` (a :class:`service.store.store.Meta`):
    seat, name, kind and, for a bot seat, the bot."""
    out: list[dict[str, Any]] = []
    for i, (name, kind, bot) in enumerate(zip(meta.players, meta.kinds, meta.bots)):
        entry: dict[str, Any] = {"seat": i, "name": name, "kind": kind}
        if kind == BOT:
            entry["bot"] = bot
        out.append(entry)
    return out


def invite_refusal(meta: Any, invite: Any) -> str:
    """The 403's sentence for a claim without the right invite (never echoing it)."""
    if meta.invite_hash is None:
        return "this match has no invite (it was created without open seats) and is not public"
    if invite is None:
        return "claiming a seat of this match needs its invite: send {\"invite\": \"…\"} (from the create response)"
    return "the invite is not this match's"


def taken(meta: Any, seat: int) -> ApiError:
    """409 ``seat_taken`` for ``seat`` of ``meta``'s match."""
    if not 0 <= seat < len(meta.kinds):
        return ApiError("seat_taken", f"there is no seat {seat}: the match has seats 0…{len(meta.kinds) - 1}")
    return ApiError("seat_taken", f"seat {seat} is not open (it is a {meta.kinds[seat]} seat); "
                    "GET …/seats shows which are")
