"""Many sessions: a batch on every core, the fleet run on the local pool or Ray,
sessions read from folders, globs and URIs.

Imports: ``design``, ``sessions``, ``cache`` and the public names of the engine,
the bill and the reports.
"""

from typing import TYPE_CHECKING

from assembler.lazy import lazy_names

if TYPE_CHECKING:  # the public names; each loads its module when first used
    from assembler.analysis.fleet.batch import (
        BatchReport,
        Options,
        analyze_batch,
        batch_json,
        human_batch,
        is_batch_target,
        session_paths,
    )
    from assembler.analysis.fleet.fleet_ray import start
    from assembler.analysis.fleet.fleet_sources import sources
    from assembler.analysis.fleet.run import run_fleet

__getattr__ = lazy_names(__name__, __file__)

__all__ = [
    "BatchReport",
    "Options",
    "analyze_batch",
    "batch_json",
    "human_batch",
    "is_batch_target",
    "run_fleet",
    "session_paths",
    "sources",
    "start",
]
