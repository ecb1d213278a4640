"""Benchmark: ``analyze`` over a folder of generated sessions, 1 worker against all cores.

Run by hand: ``.venv/bin/python benchmarks/bench_batch.py [--sessions 200] [--repeat 3]``.

Writes ``--sessions`` sessions (as YAML, then as JSON Lines) with ``assembler.sessions.generator.generate_session`` (8 to
15 LLM calls each, seed = index; Anthropic ``claude-sonnet-4-5``, ``seed``
layout) to a temporary folder, then runs ``assembler.analysis.batch.analyze_batch`` on
the folder with 1 worker process and with ``os.cpu_count()`` workers, each
``--repeat`` times, and prints the best run of each: sessions/s, steps/s, the
speed-up, how many distinct worker processes did work, and the largest peak
resident memory of a worker. Wall-clock includes starting the pool.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

from assembler.analysis.batch import BatchReport, analyze_batch, session_paths
from assembler.sessions.generator import generate_session, write_session


def write_folder(folder: Path, sessions: int, suffix: str) -> int:
    steps = 0
    for i in range(sessions):
        n = 8 + i % 8
        write_session(generate_session(n, seed=i), folder / f"session-{i:04d}{suffix}")
        steps += n
    return steps


def best_of(paths: list[Path], workers: int, repeat: int) -> BatchReport:
    runs = [analyze_batch(paths, workers=workers) for _ in range(repeat)]
    for r in runs:
        if r.failures:
            raise SystemExit(f"unexpected failure: {r.failures[0]}")
    return min(runs, key=lambda r: r.seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--formats", nargs="+", default=[".yaml", ".jsonl"], choices=[".yaml", ".jsonl"]
    )
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    rows = []
    steps = 0
    for suffix in args.formats:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            steps = write_folder(folder, args.sessions, suffix)
            paths = session_paths(str(folder))
            base: float | None = None
            for workers in sorted({1, cores}):
                r = best_of(paths, workers, args.repeat)
                assert r.steps == steps
                base = base or r.seconds
                rows.append(
                    (
                        suffix.lstrip("."),
                        workers,
                        len(r.sessions),
                        r.steps,
                        r.seconds,
                        len(r.sessions) / r.seconds,
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
    print()
    header = (
        "| files | workers | sessions | steps | time s | sessions/s | steps/s | speed-up "
        "| processes used | peak worker RSS MB |"
    )
    print(header)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for fmt, w, n, st, sec, sps, stps, up, used, rss in rows:
        print(
            f"| {fmt} | {w} | {n} | {st:,} | {sec:.2f} | {sps:.1f} | {stps:,.0f} | {up:.2f}× "
            f"| {used} | {rss:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
