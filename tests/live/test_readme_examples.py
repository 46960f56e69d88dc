"""The documentation's examples run as printed, against a live server started
like ``make run`` (gunicorn with deploy/gunicorn.conf.py on the embedded store).

* Shell: the ```sh blocks of README.md, docs/tour.md, docs/games.md and
  docs/tournament.md (against a server with ``WEBHOOK_HOSTS=127.0.0.1``), one
  bash session per page, top to bottom (``set -euo pipefail``, ``B=`` pointed
  at the server). Each ``# →`` line (``#`` lines indented below it continue
  it) shows what the commands since the previous one print: its text, split
  at ``…``, must appear in that output in order (``…`` stands for what
  differs per run or is left out; a note after two spaces in parentheses is
  not output). Commands that are not part of a session (``make run``) are
  written in ```console blocks.
* TypeScript: every ```ts block is type-checked by tsc (strict, the client's
  settings, the client's package name mapped to its source), then bundled by
  esbuild and run in Node.
* HTML: every inline script of a ```html block is checked as what the browser
  would run it as (an ES module for ``type="module"``, else a classic
  script, where top-level ``await`` is a syntax error); the README's module
  scripts are also run in Node, the client's module they import bundled from
  its source.
* JavaScript: every ```js block is checked as an ES module.

``// → …`` on a TypeScript or HTML snippet's line is checked like ``# →``."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.servers import stop_process
from tests import ts_client
from tests.conftest import start_gunicorn

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SESSION_PAGES = [README, ROOT / "docs" / "tour.md", ROOT / "docs" / "games.md"]
#: run against a server that allows webhook calls to this machine
TOURNAMENT = ROOT / "docs" / "tournament.md"
DEFAULT_BASE = "http://127.0.0.1:8000"
GAMES = {"biberbande", "biberclan", "mein-lieber-biber", "thirteen-beavers"}
STEP = "\x1estep\x1e"
NODE_BIN = ts_client.CLIENT / "node_modules" / ".bin"


def blocks(page: Path, *languages: str) -> list[str]:
    fences = "|".join(languages)
    return re.findall(rf"^```(?:{fences})\n(.*?)^```", page.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)


def session(markdown_blocks: list[str]) -> tuple[str, list[list[str]]]:
    """The blocks as one script printing a step mark after each group of
    ``# →`` lines, and those groups (each a list of expected lines)."""
    script: list[str] = []
    groups: list[list[str]] = []
    open_group: list[str] | None = None
    for line in "\n".join(markdown_blocks).splitlines():
        if line.startswith("# →"):
            if open_group is None:
                open_group = []
                groups.append(open_group)
            open_group.append(line.removeprefix("# →").strip())
            continue
        if open_group is not None and re.match(r"#\s{2,}\S", line):
            open_group[-1] += line[1:].strip()
            continue
        if open_group is not None:
            script.append(f"printf '\\n{STEP}\\n'")
            open_group = None
        script.append(line)
    if open_group is not None:
        script.append(f"printf '\\n{STEP}\\n'")
    return "\n".join(script), groups


def expected_fragments(lines: list[str]) -> list[str]:
    """The pieces of the shown output that must appear, in order."""
    pieces = []
    for line in lines:
        shown = re.split(r"\s{2,}\(", line)[0]
        pieces += [piece.strip() for piece in shown.split("…") if piece.strip()]
    return pieces


def missing_from(output: str, fragments: list[str]) -> str | None:
    """The first fragment not found in ``output`` after the previous one."""
    position = 0
    for fragment in fragments:
        found = output.find(fragment, position)
        if found < 0:
            return fragment
        position = found + len(fragment)
    return None


def comment_expectations(code: str) -> list[list[str]]:
    return [[m] for m in re.findall(r"//\s*→\s*(.+)$", code, re.MULTILINE)]


@pytest.fixture(scope="module")
def make_run_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """gunicorn as ``make run`` starts it: deploy/gunicorn.conf.py, the
    embedded store (no REDIS_URL); stopped by PID."""
    proc, base = start_gunicorn(tmp_path_factory.mktemp("make-run"), None)
    try:
        yield base
    finally:
        stop_process(proc, timeout=20)


# --------------------------------------------------------------------------
# The checker itself (it must be able to fail).
# --------------------------------------------------------------------------
def test_session_marks_each_group_of_expected_lines():
    script, groups = session(['a\n# → {"x":1,…,\n#      "y":2}   (a note)\nb\nc\n# → 204\n'])
    assert groups == [['{"x":1,…,"y":2}   (a note)'], ["204"]]
    assert script.count(STEP) == 2 and script.index("b") > script.index(STEP)
    assert expected_fragments(groups[0]) == ['{"x":1,', ',"y":2}']
    assert missing_from('{"x":1,"z":3,"y":2}', expected_fragments(groups[0])) is None
    assert missing_from('{"y":2}{"x":1,"z":3}', expected_fragments(groups[0])) == ',"y":2}'


# --------------------------------------------------------------------------
# Shell sessions.
# --------------------------------------------------------------------------
def test_the_readme_has_a_session_and_every_game_has_an_example():
    readme_blocks = blocks(README, "sh", "bash", "shell")
    assert readme_blocks and readme_blocks[0].startswith(f"B={DEFAULT_BASE}\n")
    examples = {m.group(1) for b in blocks(ROOT / "docs" / "games.md", "sh") if (m := re.match(r"new (\S+)\n", b))}
    assert examples == GAMES


NEEDS_CURL_AND_JQ = pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")),
                                       reason="the shell sessions need curl and jq (make test installs them)")


@pytest.mark.live
@NEEDS_CURL_AND_JQ
@pytest.mark.parametrize("page", SESSION_PAGES, ids=[str(p.relative_to(ROOT)) for p in SESSION_PAGES])
def test_shell_session_prints_what_the_page_shows(make_run_server: str, page: Path):
    run_session(page, make_run_server, timeout=120)


@pytest.fixture(scope="module")
def webhook_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``WEBHOOK_HOSTS=127.0.0.1 make run``, as docs/tournament.md starts it."""
    proc, base = start_gunicorn(tmp_path_factory.mktemp("make-run-webhooks"), None,
                                extra_env={"WEBHOOK_HOSTS": "127.0.0.1"})
    try:
        yield base
    finally:
        stop_process(proc, timeout=20)


@pytest.mark.live
@NEEDS_CURL_AND_JQ
def test_the_tournament_walk_through_runs(webhook_server: str):
    """docs/tournament.md from its first command to the leaderboard: a
    ladder, two webhook bots (the shipped example, in their own processes),
    fifty matches the server plays by calling them, every one rated."""
    run_session(TOURNAMENT, webhook_server, timeout=300)


def run_session(page: Path, base: str, timeout: float) -> None:
    """``page``'s shell blocks as one bash session against ``base``, each
    ``# →`` group checked against what the commands before it printed."""
    script, groups = session(blocks(page, "sh", "bash", "shell"))
    assert groups, f"{page.name}: no '# →' output to check"
    done = subprocess.run(["bash", "-x", "-euo", "pipefail", "-c", script.replace(DEFAULT_BASE, base)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert done.returncode == 0, f"{page.name}: the session stopped:\n{done.stderr[-4000:]}"
    outputs = done.stdout.split(f"\n{STEP}\n")
    assert len(outputs) == len(groups) + 1, (len(outputs), len(groups))
    for lines, output in zip(groups, outputs, strict=False):
        absent = missing_from(output, expected_fragments(lines))
        assert absent is None, f"{page.name}: printed\n{output}\nnot {lines} (missing {absent!r})"


# --------------------------------------------------------------------------
# TypeScript, HTML and JavaScript snippets.
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def node_tools() -> Path:
    """The client's npm packages (typescript, esbuild), installed as
    ``make npm-ci`` does when missing."""
    if (why := ts_client.missing()) is not None:
        pytest.skip(why)
    try:
        ts_client.ensure_built()
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    return NODE_BIN


def package_name() -> str:
    return json.loads((ts_client.CLIENT / "package.json").read_text())["name"]


def node(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["node", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def bundle(tools: Path, entry: Path, out: Path, platform: str) -> None:
    done = subprocess.run([str(tools / "esbuild"), str(entry), "--bundle", "--format=esm", f"--platform={platform}",
                           f"--alias:{package_name()}={ts_client.CLIENT / 'src' / 'index.ts'}",
                           f"--outfile={out}", "--log-level=warning"],
                          capture_output=True, text=True, timeout=120, cwd=ts_client.CLIENT)
    assert done.returncode == 0, done.stderr


def run_snippet(script: Path, code: str) -> None:
    done = node(str(script), cwd=script.parent)
    assert done.returncode == 0, done.stderr
    for lines in comment_expectations(code):
        assert missing_from(done.stdout, expected_fragments(lines)) is None, (done.stdout, lines)


def test_the_readme_has_typescript_and_html_snippets():
    assert blocks(README, "ts", "typescript") and blocks(README, "html")


@pytest.mark.live
@pytest.mark.parametrize("page", SESSION_PAGES, ids=[str(p.relative_to(ROOT)) for p in SESSION_PAGES])
def test_typescript_snippets_type_check_and_run(node_tools: Path, make_run_server: str, page: Path,
                                                tmp_path: Path):
    for n, code in enumerate(blocks(page, "ts", "typescript")):
        source = tmp_path / f"snippet{n}.ts"
        source.write_text(code)
        config = {"compilerOptions": {
            "target": "ES2022", "module": "ESNext", "moduleResolution": "Bundler", "lib": ["ES2022", "DOM"],
            "types": ["node"], "typeRoots": [str(ts_client.CLIENT / "node_modules" / "@types")],
            "strict": True, "noEmit": True, "skipLibCheck": True,
            "paths": {package_name(): [str(ts_client.CLIENT / "src" / "index.ts")]}}, "files": [source.name]}
        (tmp_path / "tsconfig.json").write_text(json.dumps(config))
        done = subprocess.run([str(node_tools / "tsc"), "-p", str(tmp_path)], capture_output=True, text=True,
                              timeout=180, cwd=tmp_path)
        assert done.returncode == 0, f"{page.name}, snippet {n}:\n{done.stdout}{done.stderr}"
        source.write_text(code.replace(DEFAULT_BASE, make_run_server))
        bundle(node_tools, source, tmp_path / f"snippet{n}.mjs", "node")
        run_snippet(tmp_path / f"snippet{n}.mjs", code)


def inline_scripts(html: str) -> list[tuple[bool, str]]:
    """(is a module, code) of every ``<script>`` with a body."""
    return [("type=\"module\"" in attributes, body)
            for attributes, body in re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.DOTALL) if body.strip()]


def test_a_classic_script_with_await_is_refused(tmp_path: Path):
    if shutil.which("node") is None:
        pytest.skip("node is missing")
    (module, body), = inline_scripts('<script>\n  const r = await fetch("/");\n</script>')
    (tmp_path / "classic.cjs").write_text(body)
    assert not module and node("--check", "classic.cjs", cwd=tmp_path).returncode != 0


@pytest.mark.parametrize("page", SESSION_PAGES, ids=[str(p.relative_to(ROOT)) for p in SESSION_PAGES])
def test_html_and_js_snippets_parse_as_the_browser_runs_them(page: Path, tmp_path: Path):
    if shutil.which("node") is None:
        pytest.skip("node is missing")
    scripts = [s for html in blocks(page, "html") for s in inline_scripts(html)]
    scripts += [(True, code) for code in blocks(page, "js", "javascript")]
    for n, (module, code) in enumerate(scripts):
        name = f"script{n}.{'mjs' if module else 'cjs'}"
        (tmp_path / name).write_text(code)
        done = node("--check", name, cwd=tmp_path)
        assert done.returncode == 0, f"{page.name}, {'module' if module else 'classic'} script {n}:\n{done.stderr}"


@pytest.mark.live
def test_readme_module_scripts_run(node_tools: Path, make_run_server: str, tmp_path: Path):
    modules = [code for html in blocks(README, "html") for module, code in inline_scripts(html) if module]
    assert modules
    for n, code in enumerate(modules):
        for imported in set(re.findall(r"from\s+\"\./([\w.-]+\.mjs)\"", code)):
            bundle(node_tools, ts_client.CLIENT / "src" / "index.ts", tmp_path / imported, "neutral")
        script = tmp_path / f"page{n}.mjs"
        script.write_text(code.replace(DEFAULT_BASE, make_run_server))
        run_snippet(script, code)
