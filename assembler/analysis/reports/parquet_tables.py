"""Three Parquet tables of an analysed session: sessions, steps, blocks.

Each session is written by the task that analysed it, as one file per table under
``DIR/<table>/date=YYYY-MM-DD/`` (Hive partitioning by the UTC day of the session's
first step), named after a hash of its source so that running again replaces it.
``DIR`` is a local folder or a URI pyarrow writes to. The columns are
:data:`SESSION_COLUMNS`, :data:`STEP_COLUMNS` and :data:`BLOCK_COLUMNS`
(documented in docs/fleet.md); ``date`` comes from the folder name.
"""

from __future__ import annotations

import hashlib
from datetime import UTC
from typing import Any

from assembler.analysis.engine import SessionAnalysis
from assembler.sessions.model import Session

TABLES = ("sessions", "steps", "blocks")

# (column, Arrow type name): the schema in one place, for the writer and the docs
SESSION_COLUMNS = (
    ("session_id", "string"),
    ("source", "string"),
    ("agent", "string"),
    ("agent_id", "string"),
    ("provider", "string"),
    ("model", "string"),
    ("layout", "string"),
    ("ttl", "string"),
    ("started_at", "timestamp"),
    ("ended_at", "timestamp"),
    ("steps", "int64"),
    ("tokens", "int64"),
    ("cache_read", "int64"),
    ("cache_write", "int64"),
    ("uncached", "int64"),
    ("hit_ratio", "float64"),
    ("usd", "float64"),
    ("usd_without_cache", "float64"),
    ("measured_steps", "int64"),
    ("measured_disagree", "int64"),
)
STEP_COLUMNS = (
    ("session_id", "string"),
    ("step", "int64"),
    ("label", "string"),
    ("function", "string"),
    ("depth", "int64"),
    ("timestamp", "timestamp"),
    ("provider", "string"),
    ("model", "string"),
    ("tokens", "int64"),
    ("tokens_tools", "int64"),
    ("tokens_l0", "int64"),
    ("tokens_l1", "int64"),
    ("tokens_l2", "int64"),
    ("cache_read", "int64"),
    ("cache_write", "int64"),
    ("uncached", "int64"),
    ("hit_ratio", "float64"),
    ("outcome", "string"),
    ("usd", "float64"),
    ("usd_without_cache", "float64"),
    ("miss_component", "string"),
    ("miss_layer", "string"),
    ("miss_reason", "string"),
    ("tokens_lost", "int64"),
    ("measured_input", "int64"),
    ("measured_cache_read", "int64"),
    ("measured_cache_write", "int64"),
    ("measured_output", "int64"),
    ("measured_agree", "bool"),
)
BLOCK_COLUMNS = (
    ("session_id", "string"),
    ("step", "int64"),
    ("position", "int64"),
    ("component", "string"),
    ("layer", "string"),
    ("section", "string"),
    ("tokens", "int64"),
    ("cache", "string"),
    ("change", "string"),
    ("breakpoint", "int64"),
)


def outcome(read: int, total: int) -> str:
    """``hit`` (everything read from the cache), ``partial`` or ``miss`` (nothing read)."""
    if read <= 0:
        return "miss"
    return "hit" if read >= total else "partial"


def _sessions(a: SessionAnalysis, session: Session, source: str) -> list[dict[str, Any]]:
    from assembler.analysis.bill import compare_measured

    t = a.totals
    checks = compare_measured(a)
    times = [s.timestamp for s in a.steps]
    return [
        {
            "session_id": a.session,
            "source": source,
            "agent": session.profile.agent.name,
            "agent_id": session.profile.agent.id,
            "provider": a.provider,
            "model": a.model,
            "layout": a.layout,
            "ttl": a.ttl,
            "started_at": min(times, default=None),
            "ended_at": max(times, default=None),
            "steps": len(a.steps),
            "tokens": int(t["tokens"]),
            "cache_read": int(t["read"]),
            "cache_write": int(t["write"]),
            "uncached": int(t["uncached"]),
            "hit_ratio": t["hit_ratio"],
            "usd": t["usd"],
            "usd_without_cache": t["usd_without_cache"],
            "measured_steps": len(checks),
            "measured_disagree": sum(not c.agree for c in checks),
        }
    ]


def _steps(a: SessionAnalysis) -> list[dict[str, Any]]:
    from assembler.analysis.bill import compare_measured

    agree = {c.step: c.agree for c in compare_measured(a)}
    rows = []
    for s in a.steps:
        m, u = s.miss, s.measured
        rows.append(
            {
                "session_id": a.session,
                "step": s.step,
                "label": s.label,
                "function": s.function,
                "depth": s.depth,
                "timestamp": s.timestamp,
                "provider": s.provider or a.provider,
                "model": s.model or a.model,
                "tokens": s.tokens["total"],
                "tokens_tools": s.tokens["tools"],
                "tokens_l0": s.tokens["L0"],
                "tokens_l1": s.tokens["L1"],
                "tokens_l2": s.tokens["L2"],
                "cache_read": s.read,
                "cache_write": s.write,
                "uncached": s.uncached,
                "hit_ratio": s.hit_ratio,
                "outcome": outcome(s.read, s.tokens["total"]),
                "usd": s.usd,
                "usd_without_cache": s.usd_without_cache,
                "miss_component": m.component if m else None,
                "miss_layer": m.layer if m else None,
                "miss_reason": m.reason if m else None,
                "tokens_lost": m.tokens_lost if m else 0,
                "measured_input": u.input if u else None,
                "measured_cache_read": u.cache_read if u else None,
                "measured_cache_write": u.cache_write if u else None,
                "measured_output": u.output if u else None,
                "measured_agree": agree.get(s.step),
            }
        )
    return rows


def _blocks(a: SessionAnalysis) -> list[dict[str, Any]]:
    return [
        {
            "session_id": a.session,
            "step": s.step,
            "position": i,
            "component": b.name,
            "layer": b.layer,
            "section": b.section,
            "tokens": b.tokens,
            "cache": b.cache,
            "change": b.change,
            "breakpoint": b.breakpoint,
        }
        for s in a.steps
        for i, b in enumerate(s.blocks)
    ]


def schema(columns: tuple[tuple[str, str], ...]) -> Any:
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    return pa.schema([(name, types[kind]) for name, kind in columns])


def session_tables(a: SessionAnalysis, session: Session, source: str) -> dict[str, Any]:
    """The three ``pyarrow.Table`` of one analysed session."""
    import pyarrow as pa

    rows = {"sessions": _sessions(a, session, source), "steps": _steps(a), "blocks": _blocks(a)}
    columns = {"sessions": SESSION_COLUMNS, "steps": STEP_COLUMNS, "blocks": BLOCK_COLUMNS}
    return {name: pa.Table.from_pylist(rows[name], schema=schema(columns[name])) for name in TABLES}


def write_session_tables(a: SessionAnalysis, session: Session, source: str, root: str) -> None:
    """Write one session's rows of the three tables under ``root`` (a folder or a URI)."""
    import pyarrow.parquet as pq
    from pyarrow import fs

    tables = session_tables(a, session, source)
    first = min((s.timestamp for s in a.steps), default=None)
    day = first.astimezone(UTC).date().isoformat() if first else "unknown"
    name = hashlib.sha256(source.encode()).hexdigest()[:20] + ".parquet"
    filesystem, base = (
        fs.FileSystem.from_uri(root) if "://" in root else (fs.LocalFileSystem(), root)
    )
    for table in TABLES:
        folder = f"{base.rstrip('/')}/{table}/date={day}"
        filesystem.create_dir(folder, recursive=True)
        pq.write_table(tables[table], f"{folder}/{name}", filesystem=filesystem)
