"""The documentation in ``docs/`` covers what the code cites and serves.

* every rule id (``BB-4.2``, ``MLB-4.4a``, …) cited in ``engine/*.py``, in the
  tests or in the arena's bots is defined in the doc of its game (it starts a
  heading, a list item or a table row there); each game declares its prefix
  (``Game.rule_prefix``: ``BB`` → biberbande, …);
* every decision id (``D5``) cited in a game's engine module, in its tests
  (``tests/engine/test_<module>_*.py``) or in its bot is defined in that game's doc;
* every game of ``engine.REGISTRY`` has its declared docs page, the docs index
  links it (a page under ``docs/``), and its generated move and event tables
  are those of its declaration (``python -m devtools.docs_tables``);
* every error code of ``service/http/errors.py`` and every operation
  (``GET /v1/games``) of ``openapi/openapi.json`` appears in ``docs/api.md``.
"""
from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

import engine
from devtools import docs_tables
from service.http.errors import CODES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PREFIX_GAME = {game.rule_prefix: game.id for game in engine.REGISTRY}
RULE_ID = re.compile(r"\b(" + "|".join(PREFIX_GAME) + r")-[0-9]+(?:\.[0-9]+)?[a-z]?\b")
DECISION_ID = re.compile(r"\bD[0-9]+\b")
GAME_IDS = [game.id for game in engine.REGISTRY]


def module_of(game_id: str) -> str:
    return game_id.replace("-", "_")


def doc_of(game_id: str) -> Path:
    """The game's declared docs page."""
    game = engine.REGISTRY.get(game_id)
    assert game is not None
    return ROOT / game.declaration.docs


def cited_in(text: str, rule_id: str) -> bool:
    """``rule_id`` occurs as a whole id: ``BB-4`` is not found in ``BB-4.1``
    nor ``BB-4.1`` in ``BB-4.10`` or ``BB-4.1a``."""
    return re.search(rf"(?<![\w.-]){re.escape(rule_id)}(?![\w-]|\.\d)", text) is not None


def defined_in(text: str, rule_id: str) -> bool:
    """``rule_id`` is where a reader looks it up: it starts a heading
    (``## BB-4 Turn structure``), a list item (``- BB-4.1 …``) or a table
    row (``| MLB-2.1 | …``), not merely mentioned in passing."""
    starts = [line.lstrip(" -#|") for line in text.splitlines()
              if line.lstrip().startswith(("-", "#", "|"))]
    return any(cited_in(line[:len(rule_id) + 1], rule_id) for line in starts)


def sources() -> list[Path]:
    """Files whose rule ids must be documented: engines, tests, bots."""
    files = sorted((ROOT / "engine").glob("*.py")) + sorted((ROOT / "tests").rglob("*.py"))
    files += sorted((ROOT / "arena" / "bots").glob("*.py"))
    return [f for f in files if f.name != "test_docs.py"]


def rule_ids() -> dict[str, set[tuple[str, str]]]:
    """game id → {(rule id, file it is cited in)}."""
    found: dict[str, set[tuple[str, str]]] = {g: set() for g in PREFIX_GAME.values()}
    for path in sources():
        for match in RULE_ID.finditer(path.read_text(encoding="utf-8")):
            found[PREFIX_GAME[match.group(1)]].add((match.group(0), str(path.relative_to(ROOT))))
    return found


def decision_sources(game_id: str) -> list[Path]:
    """The files whose bare ``Dn`` ids belong to ``game_id``: its engine
    module, its bot, its tests."""
    game = engine.REGISTRY.get(game_id)
    assert game is not None
    module = module_of(game_id)
    files = [Path(inspect.getfile(type(game))), ROOT / "arena" / "bots" / f"{module}.py"]
    files += sorted((ROOT / "tests").rglob(f"test_*{module}_*.py"))
    return [f for f in files if f.exists()]


def decision_ids(game_id: str) -> set[tuple[str, str]]:
    return {(m.group(0), str(path.relative_to(ROOT)))
            for path in decision_sources(game_id)
            for m in DECISION_ID.finditer(path.read_text(encoding="utf-8"))}


def missing(game_id: str, cited: set[tuple[str, str]]) -> list[str]:
    text = doc_of(game_id).read_text(encoding="utf-8")
    return sorted(f"{rid} (cited in {where})" for rid, where in cited if not defined_in(text, rid))


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_registered_game_has_a_doc(game_id: str) -> None:
    page = doc_of(game_id)
    assert page.is_file(), f"{page.relative_to(ROOT)} (the declared docs page of {game_id}) is missing"
    if page.is_relative_to(DOCS):
        assert str(page.relative_to(DOCS)) in (DOCS / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_generated_docs_tables_are_fresh(game_id: str) -> None:
    """The move and event tables of the game's docs page are generated from
    its declaration; ``python -m devtools.docs_tables`` rewrites them."""
    game = engine.REGISTRY.get(game_id)
    assert game is not None
    text = doc_of(game_id).read_text(encoding="utf-8")
    assert docs_tables.BEGIN in text, f"{game_id}: no generated tables; run python -m devtools.docs_tables"
    assert docs_tables.updated(text, docs_tables.tables(game)) == text, \
        f"{game_id}: the generated tables are stale; run python -m devtools.docs_tables"
    assert all(f"`{m.type}`" in text for m in game.declaration.moves)


@pytest.mark.parametrize("game_id", sorted(PREFIX_GAME.values()))
def test_every_cited_rule_id_is_documented(game_id: str) -> None:
    cited = rule_ids()[game_id]
    assert cited, f"no rule id of {game_id} found in the code: the scan is broken"
    assert not missing(game_id, cited), f"docs/games/{game_id}.md lacks {missing(game_id, cited)}"


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_cited_decision_id_is_documented(game_id: str) -> None:
    cited = decision_ids(game_id)
    assert cited, f"no decision id found for {game_id}: the scan is broken"
    assert not missing(game_id, cited), f"docs/games/{game_id}.md lacks {missing(game_id, cited)}"


def test_every_error_code_is_in_the_api_doc() -> None:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    absent = [code for code in CODES if f"`{code}`" not in text]
    assert not absent, f"docs/api.md lacks the error codes {absent}"


def test_every_openapi_path_is_in_the_api_doc() -> None:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    paths = json.loads((ROOT / "openapi" / "openapi.json").read_text(encoding="utf-8"))["paths"]
    absent = [f"{method.upper()} {path}" for path, operations in paths.items() for method in operations
              if method != "parameters" and f"{method.upper()} {path}" not in text]
    assert not absent, f"docs/api.md lacks the operations {absent}"


def test_the_id_matcher_tells_ids_apart() -> None:
    """The check itself: a prefix of a longer id does not count."""
    assert cited_in("see BB-4.1.", "BB-4.1")
    assert cited_in("(BB-4, D5)", "BB-4") and cited_in("(BB-4, D5)", "D5")
    assert not cited_in("BB-4.10", "BB-4.1")
    assert not cited_in("BB-4.1a", "BB-4.1")
    assert not cited_in("BB-4.1", "BB-4")
    assert not cited_in("D15", "D1")
    assert not cited_in("MLB-4.4", "B-4.4")
    assert defined_in("## BB-4 Turn structure\n- BB-4.1 Phase", "BB-4")
    assert defined_in("  - MLB-4.4a c goes", "MLB-4.4a")
    assert defined_in("| MLB-2.1 | `deck` |", "MLB-2.1")
    assert not defined_in("- BB-4.6 Action complete (BB-4.5)", "BB-4.5")
    assert not defined_in("- BB-4.10 Stuck", "BB-4.1")
