"""The transcripts bench_real.py generates: a real transcript's turns repeated, each copy
opened by a compaction, imported as one longer session of the same shape."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from assembler.analysis.engine import import_file
from tests.sessions.importers.importer_helpers import FIXTURES, load

ROOT = Path(__file__).resolve().parents[1]
BASE = FIXTURES / "traffic" / "claude_lifetime.jsonl"


def _bench() -> ModuleType:
    sys.path.insert(0, str(ROOT / "benchmarks"))  # it imports its sibling bench_analyze
    try:
        spec = importlib.util.spec_from_file_location(
            "bench_real", ROOT / "benchmarks" / "bench_real.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_a_scaled_transcript_repeats_the_turns_after_a_compaction_each(tmp_path: Path) -> None:
    out = _bench().scaled(BASE, 3, tmp_path / "x3.jsonl")
    assert out.stat().st_size >= 3 * BASE.stat().st_size
    records = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    uuids = [r["uuid"] for r in records if "uuid" in r]
    assert len(uuids) == len(set(uuids))  # every id made unique
    times = [r["timestamp"] for r in records if "timestamp" in r]
    assert times == sorted(times)  # every copy after the one before
    base = load(import_file("claude-code", BASE))
    scaled = load(import_file("claude-code", out))
    n = sum(1 for e in base.events if type(e).__name__ == "LLMCall")
    calls = [e for e in scaled.events if type(e).__name__ == "LLMCall"]
    copies = sum(1 for r in records if r.get("subtype") == "compact_boundary") + 1
    assert copies >= 3 and len(calls) == n * copies
    # the context stays the base's size: each copy starts again from a summary
    first, later = calls[0].request, calls[n].request
    assert first is not None and later is not None
    assert len(later.blocks()) <= len(first.blocks()) + 2
