"""Many sessions: a batch on every core, the fleet run on the local pool or Ray,
sessions read from folders, globs and URIs, and your own traffic's bill per project and day.

Imports: ``design``, ``sessions``, ``cache`` and the public names of the engine,
the bill and the reports.
"""

from typing import TYPE_CHECKING

from assembler.lazy import lazy_names

if TYPE_CHECKING:  # the public names; each loads its module when first used
    from assembler.analysis.fleet.batch import (
        MAX_WORKERS,
        WORKERS_PER_CORE,
        BatchReport,
        Failure,
        Options,
        analyze_batch,
        batch_json,
        human_batch,
        is_batch_target,
        pool_size,
        session_paths,
    )
    from assembler.analysis.fleet.fleet_ray import start
    from assembler.analysis.fleet.fleet_sources import sources
    from assembler.analysis.fleet.run import run_fleet
    from assembler.analysis.fleet.usage import (
        Bucket,
        UsageReport,
        collect,
        default_places,
        run_usage,
        unread_writes,
    )

__getattr__ = lazy_names(__name__, __file__)

__all__ = [
    "MAX_WORKERS",
    "WORKERS_PER_CORE",
    "BatchReport",
    "Bucket",
    "Failure",
    "Options",
    "UsageReport",
    "analyze_batch",
    "batch_json",
    "collect",
    "default_places",
    "human_batch",
    "is_batch_target",
    "pool_size",
    "run_fleet",
    "run_usage",
    "session_paths",
    "sources",
    "start",
    "unread_writes",
]
