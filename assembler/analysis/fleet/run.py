"""A batch with fleet outputs or on Ray: sources, engine, Parquet and spans in one call.

``engine="local"`` is :func:`assembler.analysis.fleet.batch.analyze_batch` with the fleet
task; ``engine="ray"`` is :mod:`assembler.analysis.fleet.fleet_ray`. Either way each
session is analysed once, by one task that writes its own outputs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from assembler.analysis.fleet.batch import BatchReport, Options, analyze_batch
from assembler.analysis.fleet.fleet_task import Outputs, join_otlp, task_for

ENGINES = ("local", "ray")


def run_fleet(
    sources: list[str],
    options: Options,
    *,
    engine: str = "local",
    workers: int | None = None,
    address: str | None = None,
    parquet: str | None = None,
    otlp: str | None = None,
) -> BatchReport:
    """Analyse ``sources`` (paths or URIs) on ``engine``; write ``parquet`` (a folder or
    URI) and ``otlp`` (a file of OTLP JSON Lines, one session a line) when given."""
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINES)}, found {engine!r}")
    parts = None
    if otlp is not None:
        folder = Path(otlp).resolve().parent
        if not folder.is_dir():
            raise ValueError(f"--otlp {otlp}: no such folder {folder}")
        parts = tempfile.mkdtemp(prefix=".spans-", dir=folder)  # beside the file the driver joins
    outputs = Outputs(parquet=parquet, otlp_parts=parts)
    try:
        if engine == "ray":
            from assembler.analysis.fleet.fleet_ray import analyze_batch_ray

            report = analyze_batch_ray(sources, options, outputs=outputs, address=address)
        else:
            report = analyze_batch(sources, options, workers=workers, task=task_for(outputs))
    finally:
        if parts is not None and otlp is not None:
            join_otlp(parts, sources, otlp)
    return report
