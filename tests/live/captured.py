"""The proxy's capture lines analysed as ``analyze`` reads them afterwards: written as they
are to a log that the request-log importer reads (its ``read_exchange`` takes the capture
shape, streams reassembled), the sizes scaled as a prediction says it counted them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assembler.analysis.engine import StepAnalysis, analyze, import_session
from assembler.sessions.loader import parse_session


def predicted_lines(
    lines: list[dict[str, Any]], session: str | None = None
) -> list[dict[str, Any]]:
    """The lines of API calls the cache sees (a prediction was made: not count_tokens, not
    another path), of ``session`` if named, in request order."""
    mine = [
        x for x in lines if "prediction" in x and (session is None or x.get("session") == session)
    ]
    return sorted(mine, key=lambda x: x["request"]["timestamp"])


def analysed(
    lines: list[dict[str, Any]], out: Path, scales: Mapping[str, float] | None = None
) -> list[StepAnalysis]:
    """The steps of ``lines`` written to ``out`` and analysed as a log, with the sizes of
    each model in ``scales`` times its factor (``session.token_scale``)."""
    with out.open("w") as f:
        f.writelines(json.dumps(x) + "\n" for x in lines)
    data = import_session("requests", out).data
    scaled = {m: s for m, s in (scales or {}).items() if s != 1.0}
    if scaled:
        data["session"]["token_scale"] = scaled
    return list(analyze(parse_session(json.dumps(data), str(out), jsonl=False)).steps)
