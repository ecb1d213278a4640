"""``--workers N`` never starts more processes than files, nor more than a few per core,
and a number past the cap is refused in one line."""

from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from build import session_json

import assembler.analysis.fleet.batch as batch
from assembler.analysis.fleet import MAX_WORKERS, WORKERS_PER_CORE, analyze_batch
from tests.hostile.runner import run_cli


@pytest.fixture
def two_files(tmp_path: Path) -> Path:
    folder = tmp_path / "two"
    folder.mkdir()
    for name in ("a.json", "b.json"):
        (folder / name).write_text(session_json(), "utf-8")
    return folder


def test_a_hundred_thousand_workers_are_refused(two_files: Path) -> None:
    run = run_cli(["analyze", str(two_files), "--workers", "100000"], two_files.parent / "p")
    assert run.code == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert f"--workers: expected an integer from 1 to {MAX_WORKERS:,}, found 100000" in run.stderr


def test_the_cap_on_two_files_starts_two(two_files: Path) -> None:
    run = run_cli(
        ["analyze", str(two_files), "--workers", str(MAX_WORKERS), "--json"], two_files.parent / "p"
    )
    assert run.code == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["workers"] == 2 and report["worker_processes_used"] <= 2


def test_processes_started_are_counted_at_the_pool(
    two_files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool itself is watched: what it was asked for and what it forked."""
    asked: list[int | None] = []
    started: list[int] = []

    class Watched(ProcessPoolExecutor):
        def __init__(self, max_workers: int | None = None, **kwargs: Any) -> None:
            asked.append(max_workers)
            super().__init__(max_workers, **kwargs)

        def shutdown(self, *args: Any, **kwargs: Any) -> None:
            started.append(len(self._processes or {}))  # type: ignore[attr-defined]
            super().shutdown(*args, **kwargs)

    monkeypatch.setattr(batch, "ProcessPoolExecutor", Watched)
    report = analyze_batch(sorted(two_files.iterdir()), workers=MAX_WORKERS)
    assert asked == [2] and 1 <= started[0] <= 2 and report.workers == 2
    assert len(report.sessions) == 2


@pytest.mark.parametrize(
    ("workers", "files", "expected"),
    [(None, 1, 1), (1, 50, 1), (MAX_WORKERS, 10_000, (os.cpu_count() or 1) * WORKERS_PER_CORE)],
)
def test_pool_size(workers: int | None, files: int, expected: int) -> None:
    assert batch.pool_size(workers, files) == min(expected, files)


def test_the_library_refuses_past_the_cap(two_files: Path) -> None:
    with pytest.raises(ValueError, match="workers: expected 1 to 1,024, found 100000"):
        analyze_batch(sorted(two_files.iterdir()), workers=100_000)
