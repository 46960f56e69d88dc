"""Reading ``GET /v1/matches/{id}/stream`` in tests: SSE and NDJSON parsers
over any iterator of byte chunks (Flask's test client or ``requests``)."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Frame:
    """One SSE message (``kind`` ``events`` or ``end``) or a keep-alive
    (``kind`` ``keepalive``); NDJSON lines come as ``events``/``keepalive``."""

    kind: str
    data: Any = None
    id: str | None = None


def sse_frames(chunks: Iterable[bytes]) -> Iterator[Frame]:
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            fields: dict[str, str] = {}
            comment = False
            for line in block.decode().split("\n"):
                if line.startswith(":"):
                    comment = True
                    continue
                name, _, value = line.partition(": ")
                fields[name] = value
            if not fields:
                assert comment, f"empty SSE block {block!r}"
                yield Frame("keepalive")
                continue
            yield Frame(fields.get("event", "message"), json.loads(fields["data"]), fields.get("id"))


def ndjson_frames(chunks: Iterable[bytes]) -> Iterator[Frame]:
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield Frame("keepalive") if not line.strip() else Frame("events", json.loads(line))
    assert not buffer, f"NDJSON stream ended inside a line: {buffer!r}"


def messages(frames: Iterable[Frame], count: int | None = None, *, max_keepalives: int = 200) -> list[Frame]:
    """Frames other than keep-alives: ``count`` of them, or all until the end."""
    out: list[Frame] = []
    idle = 0
    for frame in frames:
        if frame.kind == "keepalive":
            idle += 1
            assert idle <= max_keepalives, f"no message after {idle} keep-alives; got {out}"
            continue
        out.append(frame)
        if count is not None and len(out) == count:
            break
    return out
