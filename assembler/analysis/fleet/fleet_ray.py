"""The Ray engine: one Ray task per session, results streamed back as they finish.

Each task runs :func:`assembler.analysis.fleet.fleet_task.run_task` (the same job as a
local worker, so the numbers are the same) with one CPU. At most ``window``
tasks are in flight, so the driver's object references stay bounded however
many sessions there are; as each finishes, its summary is kept (a few numbers)
and ``on_result`` is called. Without an address a local Ray is started with the
machine's cores, without its dashboard and without usage reporting. Ray is the
optional ``fleet`` extra and is imported only here, on first use.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from assembler.analysis.fleet.batch import BatchReport, Failure, Options, SessionSummary
from assembler.analysis.fleet.fleet_task import Outputs, run_task

INSTALL_HINT = "the Ray engine needs the fleet extra: pip install .[fleet]"
WINDOW_PER_CPU = 4  # tasks in flight per cluster CPU: enough to keep every core busy

Result = SessionSummary | Failure


def _ray() -> Any:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage reporting
    try:
        import ray
    except ImportError:
        raise RuntimeError(INSTALL_HINT) from None
    return ray


def start(address: str | None = None, num_cpus: int | None = None) -> Any:
    """Connect to ``address`` or start a local Ray (all cores); reuse one already running."""
    import logging

    ray = _ray()
    if not ray.is_initialized():
        local = {"num_cpus": num_cpus or os.cpu_count() or 1} if address is None else {}
        ray.init(
            address=address,
            include_dashboard=False if address is None else None,
            log_to_driver=False,
            logging_level=logging.WARNING,
            **local,
        )
    return ray


def analyze_batch_ray(
    sources: Sequence[str],
    options: Options | None = None,
    *,
    outputs: Outputs | None = None,
    address: str | None = None,
    on_result: Callable[[Result], None] | None = None,
) -> BatchReport:
    """Analyse every session in ``sources`` (paths or URIs) as Ray tasks."""
    options = options or Options()
    outputs = outputs or Outputs()
    ray = start(address)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    remote = ray.remote(num_cpus=1, max_retries=1)(run_task)
    window = cpus * WINDOW_PER_CPU
    begin = time.perf_counter()
    results: dict[int, Result] = {}
    pending: dict[Any, int] = {}
    queue = iter(enumerate(sources))

    def submit() -> None:
        for i, source in queue:
            pending[remote.remote(source, options, outputs)] = i
            if len(pending) >= window:
                return

    submit()
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            i = pending.pop(ref)
            try:
                result: Result = ray.get(ref)
            except Exception as exc:  # the task itself died (killed, out of memory)
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                result = Failure(sources[i], f"worker failed: {first}")
            results[i] = result
            if on_result is not None:
                on_result(result)
        submit()
    ordered = [results[i] for i in range(len(sources))]
    ok = tuple(r for r in ordered if isinstance(r, SessionSummary))
    return BatchReport(
        sessions=ok,
        failures=tuple(r for r in ordered if isinstance(r, Failure)),
        workers=cpus,
        seconds=time.perf_counter() - begin,
        pids=frozenset(s.pid for s in ok),
    )
