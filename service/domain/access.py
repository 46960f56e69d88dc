"""What every match operation starts with: the game, the stored match and
who is calling; and the store faults every operation answers alike.

Shared by the match service (:class:`service.domain.matches.Lodge`) and the
move pipeline (:class:`service.domain.moves.MovePipeline`).  Store faults:
every operation runs within the store's time budget (``REDIS_BUDGET``); a
damaged match (keys lost to eviction or a manual delete) is 503
``store_unavailable`` saying so, and a store failure while a move may have
been written is a 503 that says it may have been applied.
"""
from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from engine.core import Game, Viewer
from service.domain import auth
from service.http.errors import ApiError, clip
from service.store.redis_client import outage
from service.store.store import DamagedMatch, Meta, Snapshot, Store, WriteUnsettled

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])


def store_faults(method: F) -> F:
    """Run a match operation of an object with a ``store`` within the
    store's time budget (a long-poll opens one per look, see
    :meth:`service.domain.matches.Lodge.events`), with damaged matches and
    unsettled writes as 503s that say what happened."""
    @functools.wraps(method)
    def run(self: Any, match_id: str, *args: Any, **kwargs: Any) -> Any:
        store: Store = self.store
        with store.budget() if method.__name__ != "events" else contextlib.nullcontext():
            try:
                return method(self, match_id, *args, **kwargs)
            except DamagedMatch as exc:
                log.error("damaged match: %s", exc)
                raise unavailable(store, (
                    f"the store has lost part of this match's data (its {exc.key!r} key: evicted or "
                    "deleted); it cannot be served or changed, only deleted by its admin")) from None
            except WriteUnsettled as exc:
                outage.failed(exc)
                raise unavailable(store, (
                    "the match store stopped answering while the change was being written: it may "
                    "have been applied. Retry with the same Idempotency-Key or version to settle it "
                    "(the retry answers the first response, or 409 if the move was applied without "
                    "a key)")) from None
    return run  # type: ignore[return-value]


@dataclass(frozen=True)
class Access:
    """The store and the game registry, and the lookups on them."""

    store: Store
    registry: Any

    def game(self, game_id: str) -> Game:
        game: Game | None = self.registry.get(game_id)
        if game is None:
            known = ", ".join(g.id for g in self.registry)
            raise ApiError("game_not_found", f"there is no game {clip(game_id)!r}; known games: {known}")
        return game

    def meta(self, match_id: str) -> Meta:
        meta = self.store.meta(match_id) if auth.MATCH_ID.fullmatch(match_id) else None
        if meta is None:
            raise not_found(match_id)
        return meta

    def load(self, match_id: str) -> tuple[Meta, Snapshot]:
        loaded = self.store.load(match_id) if auth.MATCH_ID.fullmatch(match_id) else None
        if loaded is None:
            raise not_found(match_id)
        return loaded

    def snapshot(self, match_id: str) -> Snapshot:
        """The current snapshot from the store (not this worker's cache)."""
        snap = self.store.snapshot(match_id)
        if snap is None:
            raise not_found(match_id)
        return snap

    def identify(self, meta: Meta, authorization: str | None) -> Viewer:
        """Who is calling.  A token this worker does not know for a match
        with open seats may be one claimed since ``meta`` was cached (on any
        instance): it is judged again on the stored meta."""
        try:
            return auth.identify(meta, authorization, self._other_meta)
        except ApiError as exc:
            if exc.code != "unauthenticated" or not meta.open_seats:
                raise
            fresh = self.store.meta(meta.match_id, fresh=True)
            if fresh is None or fresh.kinds == meta.kinds:
                raise
            return auth.identify(fresh, authorization, self._other_meta)

    def _other_meta(self, match_id: str) -> Meta | None:
        """Another match's meta (with its latest claims): only loaded to tell 403 from 401."""
        return self.store.meta(match_id, fresh=True)


def unavailable(store: Store, detail: str) -> ApiError:
    return ApiError("store_unavailable", detail, headers={"Retry-After": str(store.retry_after)})


def not_found(match_id: str) -> ApiError:
    return ApiError("match_not_found",
                    f"there is no match {match_id[:64]!r} (it may have expired or been deleted)")
