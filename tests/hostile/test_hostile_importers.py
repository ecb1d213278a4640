"""Round three: hostile values in every importer's input, run through the command line in
a child with an address-space cap. Each case ends in exit 2 and one line naming the file,
its line and the field, or in exit 0 (a text past the cap kept to it, with a warning
saying so), never in ``internal error``; each within 10 s of CPU and 1 GB."""

from __future__ import annotations

from pathlib import Path

import pytest
from build import Case, argv
from build_importers import CASES, HISTORY_CASES, LONG_CASES, MANY_SPANS, build

from tests.hostile.runner import SECONDS, Run, run_cli

#: The issue's budget for any input the upload limit admits (the round-two cases keep
#: their 500 MB).
PEAK_BYTES = 1024 * 1024 * 1024
#: The child is stopped here (wall time, on a shared machine); the budget itself is
#: checked on the CPU time the child used.
TIMEOUT = 60.0


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile-importers")
    build(tmp, CASES)
    return tmp


def _check(case: Case, run: Run, folder: Path) -> None:
    err = run.stderr.strip()
    assert run.cpu_seconds < SECONDS, f"{case.name}: {run.cpu_seconds:.1f} s of CPU"
    assert 0 < run.peak_bytes < PEAK_BYTES, f"{case.name} peaked at {run.peak_bytes:,} bytes"
    assert "internal error" not in err and "Traceback" not in err, err
    assert run.code == case.exit, err
    if case.exit == 2:
        assert len(err.splitlines()) == 1 and len(err) < 800, err
        if case.names_file:
            assert str(folder) in err, err
    for text in case.expect:
        assert text in err, err


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_import(case: Case, hostile: Path) -> None:
    run = run_cli(argv(case, hostile), hostile / f"{case.name}.peak", timeout=TIMEOUT)
    _check(case, run, hostile / case.name)


def _long(case: Case, tmp_path: Path) -> None:
    build(tmp_path, (case,))
    run = run_cli(argv(case, tmp_path), tmp_path / "peak", timeout=TIMEOUT)
    _check(case, run, tmp_path / case.name)
    assert "wrote" in run.stdout, run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("case", LONG_CASES, ids=[c.name for c in LONG_CASES])
def test_long_transcript_imports_in_budget(case: Case, tmp_path: Path) -> None:
    _long(case, tmp_path)


@pytest.mark.slow
def test_many_spans_import_in_linear_time_and_bounded_memory(tmp_path: Path) -> None:
    """Ten times the spans, about ten times the CPU (the import once grew faster than its
    input: 39 s for 100,000 spans); the whole command, loading back included, within 1 GB,
    and the larger export, the most the upload limit admits, within the 10 s budget.
    Measured here: 0.8 and 4.9 s of CPU, 415 MB at the peak; 4.9 s still with both cores
    saturated by other work (the wall clock then 12 to 16 s)."""
    runs = []
    for case in MANY_SPANS:
        build(tmp_path, (case,))
        run = run_cli(argv(case, tmp_path), tmp_path / "peak", timeout=TIMEOUT * 2)
        err = run.stderr.strip()
        assert run.code == 0 and "wrote" in run.stdout, err
        assert "internal error" not in err and "Traceback" not in err, err
        assert 0 < run.peak_bytes < PEAK_BYTES, f"{case.name} peaked at {run.peak_bytes:,} bytes"
        runs.append(run.cpu_seconds)
    small, large = runs
    assert large < 13 * small, f"6,850 spans {small:.1f} s of CPU, 68,500 spans {large:.1f} s"
    assert large < SECONDS, f"68,500 spans (41.9 MB): {large:.1f} s of CPU"


@pytest.mark.slow
@pytest.mark.parametrize("case", HISTORY_CASES, ids=[c.name for c in HISTORY_CASES])
def test_long_history_imports_in_budget(case: Case, tmp_path: Path) -> None:
    _long(case, tmp_path)


def test_a_cut_text_keeps_its_size(hostile: Path) -> None:
    """The 5 MB tool result is written within the cap, its block sized as the whole."""
    import json

    case = next(c for c in CASES if c.name == "claude-tool-result-5mb")
    run = run_cli(argv(case, hostile), hostile / "cut.peak", timeout=TIMEOUT)
    assert run.code == 0, run.stderr
    out = hostile / case.name / "o.jsonl"
    blocks = [
        b
        for line in out.read_text("utf-8").splitlines()
        for b in json.loads(line).get("request", {}).get("blocks", [])
    ]
    cut = [b for b in blocks if "characters in all; the rest is not kept" in b.get("text", "")]
    assert cut and all(len(b["text"]) <= 4 * 1024 * 1024 for b in cut)
    assert all(b["tokens"] > 1_000_000 for b in cut)  # 5,000,000 r's: far more than the cut
