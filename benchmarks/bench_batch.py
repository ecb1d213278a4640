"""Benchmark: ``analyze`` over a folder of generated sessions, 1 worker against all cores, local and on Ray.

Run by hand: ``.venv/bin/python benchmarks/bench_batch.py [--sessions 200] [--repeat 3]``.

Writes ``--sessions`` sessions (as YAML, then as JSON Lines) with ``assembler.sessions.generator.generate_session`` (8 to
15 LLM calls each, seed = index; Anthropic ``claude-sonnet-4-5``, ``seed``
layout) to a temporary folder, then runs ``assembler.analysis.fleet.analyze_batch`` on
the folder with 1 worker process and with ``os.cpu_count()`` workers, each
``--repeat`` times, and prints the best run of each: sessions/s, steps/s, the
speed-up, how many distinct worker processes did work, and the largest peak
resident memory of a worker. Wall-clock includes starting the pool.

With the fleet extra installed (``--engines local ray``, the default when Ray is
importable) the same folder also runs on a local Ray started for each format with
``os.cpu_count()`` CPUs (one task per session; Ray's start-up is printed
separately, not counted in the runs): its first run, on cold workers, and the
best of ``--repeat`` runs on the same, now warm, workers. The engines stand side
by side in sessions per minute; the load average is printed since other jobs
share the machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from assembler.analysis.fleet import BatchReport, Options, analyze_batch, session_paths
from assembler.sessions.generator import generate_session, write_session


def write_folder(folder: Path, sessions: int, suffix: str, seed_offset: int = 0) -> int:
    steps = 0
    for i in range(sessions):
        n = 8 + i % 8
        data = generate_session(n, seed=seed_offset + i)
        write_session(data, folder / f"session-{i:04d}{suffix}")
        steps += n
    return steps


def best_of(run: Callable[[], BatchReport], repeat: int) -> BatchReport:
    runs = [run() for _ in range(repeat)]
    for r in runs:
        if r.failures:
            raise SystemExit(f"unexpected failure: {r.failures[0]}")
    return min(runs, key=lambda r: r.seconds)


def start_ray(cores: int) -> float:
    """Start a local Ray once; returns the seconds it took."""
    import ray as ray_module

    from assembler.analysis.fleet import start

    ray_module.shutdown()  # no-op when none is running
    begin = time.perf_counter()
    ray = start(num_cpus=cores)

    @ray.remote  # type: ignore[untyped-decorator]
    def ready() -> int:
        return 0

    ray.get([ready.remote() for _ in range(cores)])  # the workers are up
    return time.perf_counter() - begin


def local_run(paths: list[Path], workers: int) -> Callable[[], BatchReport]:
    return lambda: analyze_batch(paths, workers=workers)


def ray_run(paths: list[str]) -> Callable[[], BatchReport]:
    from assembler.analysis.fleet import run_fleet

    return lambda: run_fleet(paths, Options(), engine="ray")


def ray_on_new_sessions(tmp: Path, sessions: int, suffix: str) -> Callable[[], BatchReport]:
    """Each call analyses sessions of the same sizes the workers have not seen (other
    seeds), so their token memo holds none of these lines: warm processes, cold data."""

    def run() -> BatchReport:
        k = len(list(tmp.iterdir())) + 1
        folder = tmp / f"new-{k}"
        folder.mkdir()
        write_folder(folder, sessions, suffix, seed_offset=100_000 * k)
        return ray_run([str(p) for p in session_paths(str(folder))])()

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--formats", nargs="+", default=[".yaml", ".jsonl"], choices=[".yaml", ".jsonl"]
    )
    default_engines = ["local", "ray"] if importlib.util.find_spec("ray") else ["local"]
    parser.add_argument("--engines", nargs="+", default=default_engines, choices=["local", "ray"])
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    ray_start: float | None = None
    rows = []
    steps = 0
    load = os.getloadavg()
    for suffix in args.formats:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            steps = write_folder(folder, args.sessions, suffix)
            paths = session_paths(str(folder))
            runs: list[tuple[str, Callable[[], BatchReport]]] = []
            if "local" in args.engines:
                runs += [("local", local_run(paths, w)) for w in sorted({1, cores})]
            if "ray" in args.engines:
                # a fresh Ray per format; its first run has cold workers (tokenizer not
                # loaded, empty token memo), later runs reuse them: both are shown
                ray_start = start_ray(cores)
                runs.append(("ray, first run", ray_run([str(p) for p in paths])))
                extra = Path(tempfile.mkdtemp(dir=tmp))
                runs.append(
                    ("ray, warm workers", ray_on_new_sessions(extra, args.sessions, suffix))
                )
            base: float | None = None
            for engine, run in runs:
                r = best_of(run, 1 if engine == "ray, first run" else args.repeat)
                assert r.steps == steps
                base = base or r.seconds
                rows.append(
                    (
                        engine,
                        suffix.lstrip("."),
                        r.workers,
                        len(r.sessions),
                        r.steps,
                        r.seconds,
                        len(r.sessions) / r.seconds * 60,
                        r.steps / r.seconds,
                        base / r.seconds,
                        len(r.pids),
                        r.peak_worker_rss_mb,
                    )
                )
    print(
        f"Python {platform.python_version()}, {platform.machine()}, {cores} CPUs · "
        f"{args.sessions} generated sessions, {steps:,} steps · best of {args.repeat}"
    )
    if ray_start is not None:
        print(f"local Ray started with {cores} CPUs in {ray_start:.1f} s (not in the times)")
    print(f"load average before and after: {load[0]:.1f} → {os.getloadavg()[0]:.1f}")
    print()
    header = (
        "| engine | files | workers | sessions | steps | time s | sessions/min | steps/s "
        "| speed-up | processes used | peak worker RSS MB |"
    )
    print(header)
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for eng, fmt, w, n, st, sec, spm, stps, up, used, rss in rows:
        print(
            f"| {eng} | {fmt} | {w} | {n} | {st:,} | {sec:.2f} | {spm:,.0f} | {stps:,.0f} "
            f"| {up:.2f}× | {used} | {rss:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
