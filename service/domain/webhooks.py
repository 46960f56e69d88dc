"""Webhook seats (api.md "Webhook seats and time banks", 1.2): a seat played
by an HTTP service that the server calls when the seat must decide.

* **Which hosts** (:class:`HostPolicy`, ``WEBHOOK_HOSTS``): a comma list of
  host names, IP addresses and CIDR ranges; empty (the default) disables
  webhook seats.  At creation a url's host must be a listed name or an IP
  address in a listed range (else 422 ``invalid_options``).  At call time
  every address the host resolves to must be in a listed range, or, for a
  listed name, a global (public) address: a listed name that resolves into
  the private network is refused unless that network is listed too.  The
  connection goes to a checked address (:mod:`service.ops.webhook_http`).
* **When**: a write that leaves a webhook seat in ``to_act`` tells the clock
  schedule to look at the match at once (:mod:`service.domain.clock`); the
  sweeper of whichever instance takes the entry calls
  :meth:`Webhooks.deliver`, which claims the decision in the store (``SET
  NX``: one delivery per decision across instances) and makes the call in a
  thread of its own (a greenlet under gevent), never in the sweeper or in
  a request.  At most :attr:`Webhooks.concurrency` calls run per worker.
* **The answer** is played by :meth:`service.domain.moves.MovePipeline.answer`
  with the compare-and-set on the decision's version: a legal move as
  ``by: "webhook"``, anything else the fallback after ``timed_out`` with
  its ``reason``.  A call that runs out of time leaves the fallback to the
  sweeper at the deadline (``reason: "timeout"``).  Nothing is retried.
* **The secret** is stored with the match (it signs every call) and never
  shown, echoed or logged; errors and logs never name the url either.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from engine.core import TIMED_OUT_REASONS
from service.http.errors import ApiError, clip
from service.http.schemas import SECRET_MAX, SECRET_MIN
from service.ops import webhook_http
from service.ops.webhook_http import HostPolicy
from service.store.keys import Keys

log = logging.getLogger(__name__)

TIMEOUT, ERROR, ILLEGAL = TIMED_OUT_REASONS
#: Calls in flight per worker at most (``WEBHOOK_CONCURRENCY``).
CONCURRENCY = 100
#: A worker with no call free looks at the match again this much later (ms).
BUSY_MS = 100

def checked_hook(name: str, hook: Any, policy: HostPolicy) -> dict[str, str]:
    """A player object's ``webhook`` (``{"url", "secret"}``), checked; 422
    ``invalid_options`` saying what is wrong (never echoing the secret)."""
    if not isinstance(hook, dict) or set(hook) != {"url", "secret"}:
        raise ApiError("invalid_options", f"player {clip(name)!r}: webhook must be "
                       "{\"url\": \"https://…\", \"secret\": \"…\"} and nothing else")
    url, secret = hook["url"], hook["secret"]
    if not isinstance(secret, str) or not SECRET_MIN <= len(secret) <= SECRET_MAX:
        raise ApiError("invalid_options", f"player {clip(name)!r}: webhook.secret must be a string of "
                       f"{SECRET_MIN}…{SECRET_MAX} characters")
    if not isinstance(url, str) or len(url) > 2048:
        raise ApiError("invalid_options", f"player {clip(name)!r}: webhook.url must be a URL (a string of "
                       "at most 2048 characters)")
    refused = policy.refusal(url)
    if refused is not None:
        raise ApiError("invalid_options", f"player {clip(name)!r}: {refused}")
    return {"url": url, "secret": secret}


def signature(secret: str, body: bytes) -> str:
    """``Lodge-Signature``: ``sha256=`` and the hex HMAC-SHA256 of ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def answer_move(reply: webhook_http.Reply) -> dict[str, Any] | str:
    """The move of an answer (200 ``{"move": {…}}``), without ``label``;
    else the reason the answer is unusable (:data:`ERROR`)."""
    if reply.status != 200:
        return ERROR
    try:
        body = orjson.loads(reply.body)
    except orjson.JSONDecodeError:
        return ERROR
    move = body.get("move") if isinstance(body, dict) else None
    if not isinstance(move, dict):
        return ERROR
    return {k: v for k, v in move.items() if k != "label"}


@dataclass(frozen=True)
class Decision:
    """One decision of a webhook seat: what the call sends, and where."""

    match_id: str
    version: int
    seat: int
    deadline: int            # epoch ms
    hook: dict[str, str]     # url and secret
    payload: dict[str, Any]  # without latency_ms (read when the call starts)


#: What plays an answer: (decision, move or None, reason or None).
Answer = Callable[[Decision, dict[str, Any] | None, str | None], None]


@dataclass
class Webhooks:
    """A worker's webhook calls: the host policy, the deadline of a match
    without a clock (``WEBHOOK_TIMEOUT_MS``), and the calls in flight."""

    policy: HostPolicy = field(default_factory=HostPolicy)
    timeout_ms: int = 2_000
    concurrency: int = CONCURRENCY
    _slots: threading.BoundedSemaphore = field(init=False)

    def __post_init__(self) -> None:
        self._slots = threading.BoundedSemaphore(self.concurrency)

    def deliver(self, client: Any, ttl: int, decision: Decision, answer: Answer) -> bool:
        """Start the call of ``decision`` unless one was started already (by
        any instance); False when this worker has no call free (the
        decision is left unclaimed, to look at again)."""
        if not self._slots.acquire(blocking=False):
            return False
        try:
            keys = Keys(decision.match_id)
            delivery = secrets.token_hex(16)
            hold = max(decision.deadline - int(time.time() * 1000), 0) + 60_000
            if not client.set(keys.hook(decision.version, decision.seat), delivery, nx=True, px=hold):
                self._slots.release()
                return True
            latency = client.hget(keys.hooks, str(decision.seat))
            client.expire(keys.hooks, ttl)
        except Exception:
            self._slots.release()
            raise
        payload = {**decision.payload, "latency_ms": None if latency is None else int(latency)}
        threading.Thread(target=self._call, args=(client, decision, payload, delivery, answer),
                         name="lodge-webhook", daemon=True).start()
        return True

    def _call(self, client: Any, decision: Decision, payload: dict[str, Any], delivery: str,
              answer: Answer) -> None:
        """The call (in its own thread or greenlet), then its answer played."""
        try:
            body = orjson.dumps(payload)
            headers = {"Content-Type": "application/json", "Lodge-Delivery": delivery,
                       "Lodge-Signature": signature(decision.hook["secret"], body),
                       "User-Agent": "Lodge-Webhook/1"}
            left = (decision.deadline - time.time() * 1000) / 1000
            started = time.monotonic()
            try:
                reply = webhook_http.post(decision.hook["url"], body, headers, started + left,
                                          self.policy.allows)
            except webhook_http.CallFailed as exc:
                log.info("webhook of match %s seat %s at version %s: %s", decision.match_id,
                         decision.seat, decision.version, exc)
                if exc.reason != TIMEOUT:  # a timeout's fallback is the sweeper's, at the deadline
                    answer(decision, None, exc.reason)
                return
            client.hset(Keys(decision.match_id).hooks, str(decision.seat),
                        int((time.monotonic() - started) * 1000))
            move = answer_move(reply)
            answer(decision, move if isinstance(move, dict) else None, move if isinstance(move, str) else None)
        except Exception:  # a store fault or a bug: the sweeper plays the fallback at the deadline
            log.exception("webhook call of match %s seat %s failed", decision.match_id, decision.seat)
        finally:
            self._slots.release()
