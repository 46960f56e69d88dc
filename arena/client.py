"""A small typed client of the Lodge HTTP contract (``docs/api.md``).

Built only on the public contract, so it doubles as the proof that the
contract is enough to play.  With ``legal=True`` (``?legal=true``) a view and
a move's answer carry the legal moves of the seats to act, so a bot needs one
request per move::

    with LodgeClient("http://127.0.0.1:8000") as lodge:
        match = lodge.create("biberbande", ["ana", "bo"], seed=42)
        view = lodge.view(match.match_id, match.token(0), legal=True)
        moves = legal_of(view)[0]
        answer = lodge.move(match.match_id, match.token(0), moves[0], version=view["version"], legal=True)
        answer.legal_moves.get(0)  # seat 0's next moves, if it is still to act

Every error response becomes a :class:`LodgeError` subclass carrying the
problem+json ``code`` (see :data:`ERRORS`).  A 503 ``store_unavailable``, a
429 ``rate_limited`` and a refused or dropped connection are retried
(honouring ``Retry-After``); every
move carries an ``Idempotency-Key`` (one per call unless given), so a retried
move is never applied twice.
"""
from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import requests

DEFAULT_URL = "http://127.0.0.1:8000"  # where `make run` serves
JSON = dict[str, Any]


# --------------------------------------------------------------------------
# Errors: one class per contract code.
# --------------------------------------------------------------------------
class LodgeError(Exception):
    """An error response.  ``code`` is the contract's stable error code,
    ``detail`` the server's sentence, ``problem`` the whole problem+json body."""

    code = "unexpected_response"

    def __init__(self, status: int, problem: JSON, headers: Mapping[str, str] | None = None):
        self.status = status
        self.problem = problem
        self.headers = headers or {}
        self.code = problem.get("code", type(self).code)
        self.detail = problem.get("detail") or problem.get("title") or f"HTTP {status}"
        super().__init__(f"{status} {self.code}: {self.detail}")


class InvalidRequest(LodgeError):
    """400: body not JSON or against the schema; field errors in ``errors``."""
    code = "invalid_request"

    @property
    def errors(self) -> Any:
        return self.problem.get("errors")


class Unauthenticated(LodgeError):
    """401: token missing or unknown where one is required."""
    code = "unauthenticated"


class Forbidden(LodgeError):
    """403: valid token, not allowed (another match, another seat, not admin)."""
    code = "forbidden"


class NotFound(LodgeError):
    """404."""
    code = "not_found"


class MatchNotFound(NotFound):
    code = "match_not_found"


class GameNotFound(NotFound):
    code = "game_not_found"


class LadderNotFound(NotFound):
    code = "ladder_not_found"


class Conflict(LodgeError):
    """409: the move came at the wrong time; nothing changed."""
    code = "conflict"


class VersionConflict(Conflict):
    """409: the ``version`` sent is stale; ``current_version`` says the current one."""
    code = "version_conflict"

    @property
    def current_version(self) -> int | None:
        return self.problem.get("current_version")


class NotYourTurn(Conflict):
    code = "not_your_turn"


class MatchFinished(Conflict):
    code = "match_finished"


class SeatTaken(Conflict):
    """409: claiming a seat that is not open."""
    code = "seat_taken"


class PayloadTooLarge(LodgeError):
    code = "payload_too_large"


class Unprocessable(LodgeError):
    """422."""
    code = "unprocessable"


class IllegalMove(Unprocessable):
    """422: a well-formed move the rules forbid; ``detail`` says why."""
    code = "illegal_move"


class InvalidOptions(Unprocessable):
    code = "invalid_options"


class IdempotencyKeyReused(Unprocessable):
    """422: an ``Idempotency-Key`` sent again with a different request."""
    code = "idempotency_key_reused"


class Retryable(LodgeError):
    """An error that a later retry may not get: the client retries it."""

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asks to wait (``Retry-After``), if it said."""
        value = self.headers.get("Retry-After")
        return float(value) if value is not None and value.isdigit() else None


class RateLimited(Retryable):
    """429: too many requests from this client (``Retry-After`` set)."""
    code = "rate_limited"


class StoreUnavailable(Retryable):
    """503: the server's store is unreachable; nothing was written."""
    code = "store_unavailable"


class Unreachable(LodgeError):
    """No HTTP response at all (connection refused or dropped, timeout)."""
    code = "unreachable"


#: problem+json ``code`` -> exception class.
ERRORS: dict[str, type[LodgeError]] = {cls.code: cls for cls in (
    InvalidRequest, Unauthenticated, Forbidden, NotFound, MatchNotFound, GameNotFound, LadderNotFound,
    VersionConflict, NotYourTurn, MatchFinished, SeatTaken, PayloadTooLarge, IllegalMove, InvalidOptions,
    IdempotencyKeyReused, RateLimited, StoreUnavailable)}
#: Fallback by status when a body has an unknown code (or is not problem+json).
_BY_STATUS: dict[int, type[LodgeError]] = {400: InvalidRequest, 401: Unauthenticated, 403: Forbidden,
                                           404: NotFound, 409: Conflict, 413: PayloadTooLarge,
                                           422: Unprocessable, 429: RateLimited, 503: StoreUnavailable}


def error_for(response: requests.Response) -> LodgeError:
    """The exception for an error response."""
    try:
        problem = response.json()
    except ValueError:
        problem = {}
    if not isinstance(problem, dict):
        problem = {}
    code = problem.get("code")
    cls = ERRORS.get(code) if isinstance(code, str) else None
    cls = cls or _BY_STATUS.get(response.status_code, LodgeError)
    return cls(response.status_code, problem, response.headers)


# --------------------------------------------------------------------------
# Responses.
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Seat:
    """A seat of a new match: a token seat has its ``token``; a bot seat
    (played by the server) names its ``bot``; an open seat has neither."""
    seat: int
    name: str
    token: str | None = None
    bot: str | None = None
    open: bool = False

    @classmethod
    def from_json(cls, data: JSON) -> Seat:
        return cls(seat=data["seat"], name=data["name"], token=data.get("token"), bot=data.get("bot"),
                   open=bool(data.get("open")))


@dataclass(frozen=True)
class CreatedMatch:
    """201 of ``POST /v1/matches``: ids, tokens and the spectator view
    (``invite`` when a seat is open)."""
    match_id: str
    game: str
    version: int
    seed: int
    seats: list[Seat]
    admin_token: str
    state: JSON
    invite: str | None = None

    def token(self, seat: int) -> str:
        token = self.seats[seat].token
        if token is None:
            raise ValueError(f"seat {seat} has no token: it is a bot or an open seat")
        return token


@dataclass(frozen=True)
class LegalMoves:
    version: int
    seat: int
    moves: list[JSON]


@dataclass(frozen=True)
class Events:
    """Events after the asked version, and the match's current version."""
    version: int
    events: list[JSON]


@dataclass(frozen=True)
class MoveResult:
    """200 of a move: the new version, its events and the caller's view;
    with ``legal=True`` also the legal moves of the seats to act that the
    caller may see (its own seat's, or every seat's for the admin)."""
    version: int
    events: list[JSON]
    state: JSON
    legal_moves: dict[int, list[JSON]] = field(default_factory=dict)


def legal_of(body: JSON) -> dict[int, list[JSON]]:
    """The ``legal_moves`` of a ``?legal=true`` answer (a view, a move's
    answer or a stream message), by seat."""
    return {int(seat): moves for seat, moves in body["legal_moves"].items()}


# --------------------------------------------------------------------------
# The client.
# --------------------------------------------------------------------------
class LodgeClient:
    """One client per thread (it keeps a pooled ``requests.Session``).

    ``retries``: how many times a 503, a 429 or a connection failure is retried;
    the wait is ``Retry-After`` when the server sends one, else ``backoff``
    doubling, capped at ``max_wait`` seconds.
    """

    def __init__(self, url: str = DEFAULT_URL, *, timeout: float = 10.0, retries: int = 5,
                 backoff: float = 0.1, max_wait: float = 5.0):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.session = requests.Session()

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> LodgeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- transport ------------------------------------------------------
    def _request(self, method: str, path: str, *, token: str | None = None, params: JSON | None = None,
                 body: Any = None, headers: dict[str, str] | None = None,
                 timeout: float | None = None) -> requests.Response:
        headers = dict(headers or {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        wait = self.backoff
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = self.session.request(method, self.url + path, params=params, json=body,
                                                headers=headers, timeout=timeout or self.timeout)
            except (requests.ConnectionError, requests.Timeout) as exc:
                if last:
                    raise Unreachable(0, {"detail": f"{method} {path}: {exc}"}) from exc
            else:
                if response.status_code < 400:
                    return response
                error = error_for(response)
                if not isinstance(error, Retryable) or last:
                    raise error
                if error.retry_after is not None:
                    wait = error.retry_after
            time.sleep(min(wait, self.max_wait))
            wait *= 2
        raise AssertionError("unreachable")  # the loop returns or raises

    def _json(self, method: str, path: str, **kw: Any) -> Any:
        return self._request(method, path, **kw).json()

    # --- catalogue and health -------------------------------------------
    def healthy(self) -> bool:
        """True when the server answers ``/readyz`` (store reachable)."""
        try:
            return self.session.get(self.url + "/readyz", timeout=self.timeout).status_code == 200
        except requests.RequestException:
            return False

    def games(self) -> list[JSON]:
        return self._json("GET", "/v1/games")["games"]

    def game(self, game: str) -> JSON:
        return self._json("GET", f"/v1/games/{game}")

    # --- matches --------------------------------------------------------
    def create(self, game: str, players: list[str | JSON] | int, *, seed: int | None = None,
               options: JSON | None = None, per_move_ms: int | None = None,
               public: bool = False, ladder: JSON | None = None) -> CreatedMatch:
        """A new match.  A player is a name or an object: ``{"name": "bo",
        "bot": "heuristic"}`` is a seat the server plays, ``{"name": "cy",
        "open": True}`` one claimed later.  ``per_move_ms`` sets the clock:
        a seat that has not moved by its deadline gets its fallback move.
        ``ladder`` (``{"id", "token"}``) makes it a ladder match: each player
        is then ``{"entrant": <entrant id>}`` (and ``"bot"`` for a server bot)."""
        body: JSON = {"game": game, "players": players}
        if seed is not None:
            body["seed"] = seed
        if options:
            body["options"] = options
        if per_move_ms is not None:
            body["clock"] = {"per_move_ms": per_move_ms}
        if public:
            body["public"] = True
        if ladder is not None:
            body["ladder"] = ladder
        data = self._json("POST", "/v1/matches", body=body)
        return CreatedMatch(match_id=data["match_id"], game=data["game"], version=data["version"],
                            seed=data["seed"], seats=[Seat.from_json(s) for s in data["seats"]],
                            admin_token=data["admin_token"], state=data["state"], invite=data.get("invite"))

    def view(self, match_id: str, token: str | None = None, *, legal: bool = False) -> JSON:
        """The caller's view: spectator without a token, else seat or admin.
        ``legal``: it also carries ``legal_moves`` (read it with :func:`legal_of`)."""
        params = {"legal": "true"} if legal else None
        return self._json("GET", f"/v1/matches/{match_id}", token=token, params=params)

    def legal_moves(self, match_id: str, token: str, *, seat: int | None = None) -> LegalMoves:
        """Every legal move of the token's seat (the admin names ``seat``)."""
        params = {"seat": seat} if seat is not None else None
        data = self._json("GET", f"/v1/matches/{match_id}/legal-moves", token=token, params=params)
        return LegalMoves(version=data["version"], seat=data["seat"], moves=data["moves"])

    def move(self, match_id: str, token: str, move: JSON, *, version: int | None = None,
             seat: int | None = None, idempotency_key: str | None = None, legal: bool = False) -> MoveResult:
        """Apply one move.  With ``version`` a stale view gets
        :class:`VersionConflict` and nothing changes.  ``legal``: the answer
        carries the next legal moves (:attr:`MoveResult.legal_moves`)."""
        body: JSON = {"move": move}
        if version is not None:
            body["version"] = version
        params: JSON = {}
        if seat is not None:
            params["seat"] = seat
        if legal:
            params["legal"] = "true"
        headers = {"Idempotency-Key": idempotency_key or uuid.uuid4().hex}
        data = self._json("POST", f"/v1/matches/{match_id}/moves", token=token, params=params or None,
                          body=body, headers=headers)
        return MoveResult(version=data["version"], events=data["events"], state=data["state"],
                          legal_moves=legal_of(data) if legal else {})

    def seats(self, match_id: str) -> list[JSON]:
        """Who holds each seat: ``kind`` is ``token``, ``open``, ``claimed`` or ``bot``."""
        return self._json("GET", f"/v1/matches/{match_id}/seats")["seats"]

    def claim(self, match_id: str, seat: int, invite: str | None = None) -> Seat:
        """Claim open seat ``seat`` with the match's invite (none needed for a
        public match); the seat's token."""
        body = {"invite": invite} if invite is not None else {}
        data = self._json("POST", f"/v1/matches/{match_id}/seats/{seat}", body=body)
        return Seat(seat=data["seat"], name=data["name"], token=data["token"])

    def resign(self, match_id: str, token: str, *, seat: int | None = None, legal: bool = False) -> MoveResult:
        """Give up: allowed any time while the match is active; the server
        plays the seat's fallback moves from then on."""
        return self.move(match_id, token, {"type": "resign"}, seat=seat, legal=legal)

    def events(self, match_id: str, token: str | None = None, *, after: int = -1,
               wait: float = 0) -> Events:
        """Events with version > ``after``; ``wait`` > 0 long-polls up to that
        many seconds (max 60) for one to exist."""
        params: JSON = {"after": after}
        if wait:
            params["wait"] = wait
        data = self._json("GET", f"/v1/matches/{match_id}/events", token=token, params=params,
                          timeout=self.timeout + wait)
        return Events(version=data["version"], events=data["events"])

    def record(self, match_id: str, token: str | None = None) -> JSON:
        """The full record: the admin any time, anyone once finished."""
        return self._json("GET", f"/v1/matches/{match_id}/record", token=token)

    def delete(self, match_id: str, token: str) -> None:
        self._request("DELETE", f"/v1/matches/{match_id}", token=token)

    # --- ladders ----------------------------------------------------------
    def create_ladder(self, game: str, name: str) -> JSON:
        """A new rating ladder: ``ladder_id``, ``game``, ``name``, ``admin_token``."""
        return self._json("POST", "/v1/ladders", body={"game": game, "name": name})

    def add_entrant(self, ladder_id: str, admin_token: str, name: str) -> JSON:
        """Register an entrant: ``entrant_id``, ``name`` and its ``token``."""
        return self._json("POST", f"/v1/ladders/{ladder_id}/entrants", token=admin_token, body={"name": name})

    def ladder(self, ladder_id: str) -> JSON:
        """The leaderboard: ``matches`` and ``entrants``, best rating first."""
        return self._json("GET", f"/v1/ladders/{ladder_id}")
