"""The documentation holds together: every relative link in README.md,
CHANGELOG.md and docs/**/*.md reaches a file (and its ``#anchor`` a heading
there, by GitHub's slugs), every ``make`` target the docs name exists, the
README stays a door (at most 300 lines) and no page quotes a test count
(it goes stale with every test added)."""
from __future__ import annotations

import re
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").rglob("*.md")])
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
README_MAX_LINES = 300

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
MAKE_CALL = re.compile(r"\bmake(?:\s+-\S+)*((?:\s+[a-z][\w-]*)+)")


def ids(pages: list[Path]) -> list[str]:
    return [str(page.relative_to(ROOT)) for page in pages]


def prose(markdown: str) -> str:
    """The text outside fenced blocks and code spans (where links are links)."""
    return CODE_SPAN.sub("", FENCE.sub("", markdown))


def code(markdown: str) -> list[str]:
    """Fenced blocks and code spans: where commands are written."""
    spans = [m.group(2) for m in CODE_SPAN.finditer(FENCE.sub("", markdown))]
    return [m.group(0) for m in FENCE.finditer(markdown)] + spans


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: markup and punctuation dropped, lower
    case, spaces to hyphens (letters of any script, digits, ``-``, ``_`` kept)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"[`*~]|<[^>]+>", "", text).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


@cache
def anchors(page: Path) -> frozenset[str]:
    """Every anchor GitHub makes for ``page``'s headings (repeats get -1, -2, …)."""
    seen: Counter[str] = Counter()
    found = set()
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", FENCE.sub("", page.read_text(encoding="utf-8")),
                              re.MULTILINE):
        base = slug(heading)
        found.add(f"{base}-{seen[base]}" if seen[base] else base)
        seen[base] += 1
    return frozenset(found)


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, https:, mailto:
            continue
        path, _, anchor = unquote(target).partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file {file.relative_to(ROOT) if file.is_relative_to(ROOT) else file}")
        elif not file.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    return broken


def make_targets() -> set[str]:
    return set(re.findall(r"^([a-zA-Z][a-zA-Z0-9_-]*):(?!=)", MAKEFILE, re.MULTILINE))


def named_targets(page: Path) -> set[str]:
    """The targets of every ``make …`` written as a command in ``page``."""
    return {target for block in code(page.read_text(encoding="utf-8"))
            for call in MAKE_CALL.findall(block) for target in call.split()}


def test_the_pages_are_found():
    assert {"README.md", "CHANGELOG.md", "docs/README.md", "docs/api.md"} <= set(ids(PAGES))


@pytest.mark.parametrize("page", PAGES, ids=ids(PAGES))
def test_every_relative_link_resolves(page: Path):
    assert not broken_links(page)


@pytest.mark.parametrize("page", PAGES, ids=ids(PAGES))
def test_every_make_target_named_exists(page: Path):
    assert not named_targets(page) - make_targets()


def test_the_readme_is_a_door():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move details into docs/"


@pytest.mark.parametrize("page", PAGES, ids=ids(PAGES))
def test_no_page_quotes_a_test_count(page: Path):
    counts = re.findall(r"\b\d[\d,]*\s+(?:tests|test cases)\b", page.read_text(encoding="utf-8"))
    assert not counts, f"{counts}: a count of tests goes stale; describe what they cover instead"


# The checks themselves, on made-up pages (each must be able to fail).
def test_slugs_follow_github(tmp_path: Path):
    assert slug("Server bots: `make bench-bots`") == "server-bots-make-bench-bots"
    assert slug("Cross-origin use (CORS)") == "cross-origin-use-cors"
    assert slug("Lodge — a door") == "lodge--a-door"
    page = tmp_path / "p.md"
    page.write_text("# A\n## Twice\n## Twice\n```sh\n# not a heading\n```\n")
    assert anchors(page) == {"a", "twice", "twice-1"}


def test_broken_links_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "b.md").write_text("# Here\n")
    page = tmp_path / "a.md"
    page.write_text("[ok](b.md#here) [web](https://x.example/y) `[code](nowhere.md)`\n"
                    "[gone](c.md) [anchor](b.md#there) [self](#nothing) ![img](img/x.png)\n"
                    "```\n[in a block](nowhere.md)\n```\n")
    assert [b.split(":")[0] for b in broken_links(page)] == ["c.md", "b.md#there", "#nothing", "img/x.png"]


def test_named_make_targets_are_found(tmp_path: Path):
    page = tmp_path / "a.md"
    page.write_text("Run `make run`, then `make -s help`; make sure nothing else.\n"
                    "```console\n$ PORT=9000 make bench-nothing\n```\n")
    assert named_targets(page) == {"run", "help", "bench-nothing"}
    assert named_targets(page) - make_targets() == {"bench-nothing"}
