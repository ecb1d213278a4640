"""One fleet task: load a session (path or URI), analyse it, write its outputs, summarise.

Both engines run :func:`run_task`, the local one in its worker processes and Ray
as one task per session, so their numbers are the same. A task writes its own
Parquet files and its own spans (a part file that the driver joins into the
``--otlp`` file in input order), and sends back only the
:class:`~assembler.analysis.fleet.batch.SessionSummary`: the driver never holds a
session's steps.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

from assembler.analysis.fleet.batch import (
    Failure,
    Options,
    SessionSummary,
    Task,
    analyze_under,
    failure,
    file_budget,
    summary_of,
)


@dataclass(frozen=True)
class Outputs:
    """Where each task writes: ``parquet`` a folder or URI, ``otlp_parts`` a staging folder."""

    parquet: str | None = None
    otlp_parts: str | None = None


def part_name(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:20] + ".json"


def run_task(source: str, options: Options, outputs: Outputs) -> SessionSummary | Failure:
    """The worker's job for one session; never raises for a bad file."""
    from assembler.analysis.fleet.fleet_sources import load_source

    start = time.perf_counter()
    try:
        with file_budget(options.file_seconds):
            session = load_source(source)
            a = analyze_under(session, options)
        if outputs.parquet is not None:
            from assembler.analysis.reports import write_session_tables

            write_session_tables(a, session, source, outputs.parquet)
        if outputs.otlp_parts is not None:
            from pathlib import Path

            from assembler.analysis.reports import otlp_line

            (Path(outputs.otlp_parts) / part_name(source)).write_text(
                otlp_line(a, source), encoding="utf-8"
            )
    except Exception as exc:  # one bad file must not stop the batch
        return failure(source, exc, options)
    return summary_of(source, a, start)


def task_for(outputs: Outputs) -> Task:
    """A picklable :data:`~assembler.analysis.fleet.batch.Task` writing ``outputs``."""
    return partial(run_task, outputs=outputs)


def join_otlp(parts: str, sources: Iterable[str], target: str) -> int:
    """Join the tasks' span files into ``target`` in input order, one line per session,
    removing the staging folder; returns the number of sessions written."""
    import shutil
    from pathlib import Path

    n = 0
    with open(target, "w", encoding="utf-8") as out:
        for source in sources:
            part = Path(parts) / part_name(source)
            if part.is_file():  # a session that failed has no spans
                out.write(part.read_text(encoding="utf-8"))
                n += 1
    shutil.rmtree(parts, ignore_errors=True)
    return n
