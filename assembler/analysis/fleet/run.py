"""A batch with fleet outputs or on Ray: sources, engine, Parquet and spans in one call.

``engine="local"`` is :func:`assembler.analysis.fleet.batch.analyze_batch` with the fleet
task; ``engine="ray"`` is :mod:`assembler.analysis.fleet.fleet_ray`. Either way each
session is analysed once, by one task that writes its own outputs.
"""

from __future__ import annotations

import shutil
import tempfile

from assembler.analysis.fleet.batch import BatchReport, Options, analyze_batch
from assembler.analysis.fleet.fleet_task import Outputs, join_otlp, task_for
from assembler.output_files import output_target, replacing

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
    if otlp is not None:  # staged beside the file the driver joins them into
        target = output_target(otlp, "--otlp", sources)
        parts = tempfile.mkdtemp(prefix=".spans-", dir=target.parent)
    outputs = Outputs(parquet=parquet, otlp_parts=parts)
    try:
        if engine == "ray":
            from assembler.analysis.fleet.fleet_ray import analyze_batch_ray

            report = analyze_batch_ray(sources, options, outputs=outputs, address=address)
        else:
            report = analyze_batch(sources, options, workers=workers, task=task_for(outputs))
        if parquet is not None and report.sessions:
            from assembler.analysis.reports import check_written

            check_written(parquet)
        if parts is not None and otlp is not None:
            with replacing(otlp, "--otlp", sources) as joined:
                join_otlp(parts, sources, str(joined))
    finally:  # a failed run leaves neither the staged spans nor a partial file
        if parts is not None:
            shutil.rmtree(parts, ignore_errors=True)
    return report
