"""Fixtures of the service tests (the shared ones are in tests/conftest.py)."""
from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from fakeredis import FakeServer


@pytest.fixture(autouse=True, scope="session")
def _fake_servers_go_with_their_clients() -> Iterator[None]:
    """A fakeredis server lives as long as a client's connection holds it.

    fakeredis keeps the server of every ``FakeRedis()`` in a class-level map
    for the whole process, and with it the server's open sockets, whose
    command parser holds the last error it raised and so the frames of the
    app that sent the command: every app a test built stayed alive, and each
    full garbage collection walked them all.  A weak map lets them go (no test
    opens a second client on a server by its name)."""
    kept = FakeServer._servers_map
    FakeServer._servers_map = weakref.WeakValueDictionary(kept)  # type: ignore[assignment]
    yield
    FakeServer._servers_map = kept


@pytest.fixture(autouse=True, scope="session")
def _collect_only_what_the_tests_make() -> Iterator[None]:
    """What exists when the first test starts (modules, schemas, the games'
    tables) lives to the end: the garbage collector stops walking it."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()
