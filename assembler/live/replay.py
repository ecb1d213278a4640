"""A request of a followed log as a step: its session's capture lines up to it, analysed as
``analyze`` reads the log afterwards, the sizes at the factor its prediction counted at.

A request's outcome depends on the requests before it and never on later ones, so the lines
up to it are all its step needs, however far the log has grown since.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assembler.analysis.engine import SessionAnalysis, analyze, builtin_layout
from assembler.sessions.importers.records import Record
from assembler.sessions.importers.request_logs.exchange import flat_line, read_exchange
from assembler.sessions.importers.request_logs.requests_lines import failure
from assembler.sessions.importers.request_logs.requests_log import requests_session
from assembler.sessions.loader import parse_session
from assembler.sessions.model import Session


@dataclass(frozen=True)
class Replayed:
    session: Session
    analysis: SessionAnalysis
    step: int | None  # the request's step (1-based); None: a failed call, not in the history


def served(line: dict[str, Any], number: int = 1) -> bool:
    """Whether a capture line is a step: a call the provider served (the importer leaves
    a failed one out of the cache's history)."""
    flat = flat_line(read_exchange(line))
    return failure(Record(number, flat, "live"), flat.get("response")) is None


def replay(lines: Sequence[dict[str, Any]], name: str, scales: Mapping[str, float]) -> Replayed:
    """``lines`` (one session's, in request order, the chosen request last) analysed, each
    model's sizes times its factor in ``scales``."""
    source = f"live session {name}"
    records = [Record(i + 1, line, source) for i, line in enumerate(lines)]
    data = requests_session(records, source, name[:200] or "live").data
    scaled = {m: s for m, s in scales.items() if s != 1.0}
    if scaled:
        data["session"]["token_scale"] = scaled
    session = parse_session(json.dumps(data), source, jsonl=False)
    analysis = analyze(session, builtin_layout("seed"))
    last = served(lines[-1], len(lines)) if lines else False
    return Replayed(session, analysis, len(analysis.steps) if last else None)
