"""The resolution of ``request.keep`` before sharing, kept as the reference: the kept
blocks copied into every request (a chain of n requests held n²/2 references)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from assembler.sessions.loader import Previous
from assembler.sessions.model import RecordedBlock, RecordedRequest


def copied(
    raw: Mapping[str, Any], previous: Previous, source: str, line: int | None, where: str
) -> RecordedRequest:
    """The resolution before sharing: the kept blocks copied, markers reset."""
    keep = raw.get("keep", 0)
    kept: tuple[RecordedBlock, ...] = ()
    if keep:
        assert previous is not None
        before = tuple(previous[1])
        marked = set(raw.get("breakpoints", []))
        kept = tuple(
            b if b.breakpoint == (k in marked) else replace(b, breakpoint=k in marked)
            for k, b in enumerate(before[:keep])
        )
    counts: dict[str, int] = {}
    for b in kept:
        counts[b.section] = counts.get(b.section, -1) + 1
    blocks = list(kept)
    for b in raw["blocks"]:
        n = counts[b["section"]] = counts.get(b["section"], -1) + 1
        blocks.append(
            RecordedBlock(
                section=b["section"],
                name=b.get("name", f"{b['section']}[{n}]"),
                text=b.get("text", ""),
                role=b.get("role", "user"),
                layer=b.get("layer"),
                tokens=b.get("tokens"),
                breakpoint=b.get("breakpoint", False),
                inferred=b.get("inferred", False),
            )
        )
    return RecordedRequest(tuple(blocks))
