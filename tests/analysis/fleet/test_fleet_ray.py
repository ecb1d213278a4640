"""The Ray engine on a local Ray with 2 CPUs: the same numbers as the local engine."""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assembler.analysis.fleet.batch import BatchReport, Options, analyze_batch, batch_json
from assembler.analysis.fleet.fleet_sources import sources
from assembler.analysis.fleet.run import run_fleet
from assembler.cli.main import main
from assembler.sessions.generator import generate_session, write_session

# ray is imported where a test runs (0.8 s of CPU): every test process collects this module
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="the fleet extra (make test installs it)"
)

N_SESSIONS = 200
RUN_DEPENDENT = ("seconds", "workers", "worker_processes_used", "peak_worker_rss_mb")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("fleet")
    for i in range(N_SESSIONS):  # small sessions: 2 to 4 LLM calls
        write_session(generate_session(2 + i % 3, seed=i), d / f"s{i:03d}.jsonl")
    (d / "broken.yaml").write_text("format: context-session/1\nsession: [unclosed\n", "utf-8")
    return d


@pytest.fixture(scope="module")
def local(folder: Path) -> BatchReport:
    return analyze_batch(sources(str(folder)), workers=2)


@pytest.fixture(scope="module")
def on_ray(folder: Path, local_ray: None) -> BatchReport:
    return run_fleet(sources(str(folder)), Options(), engine="ray")


def comparable(report: BatchReport) -> dict[str, Any]:
    out = batch_json(report)
    for key in RUN_DEPENDENT:
        out.pop(key)
    for s in out["per_session"]:
        s["path"] = Path(s["path"].removeprefix("file://")).name
    for f in out["failures"]:
        f["path"] = Path(f["path"].removeprefix("file://")).name
        f["error"] = f["error"].replace(str(Path(f["error"].split(":")[0]).parent), "")
    return out


@pytest.mark.slow
def test_ray_gives_the_local_engines_numbers_for_200_sessions(
    local: BatchReport, on_ray: BatchReport
) -> None:
    assert len(on_ray.sessions) == N_SESSIONS and len(on_ray.failures) == 1
    assert on_ray.workers == 2  # the CPUs of the local Ray
    assert comparable(on_ray) == comparable(local)
    assert [s.path for s in on_ray.sessions] == [s.path for s in local.sessions]  # input order
    assert on_ray.steps == sum(2 + i % 3 for i in range(N_SESSIONS))


@pytest.mark.slow
def test_ray_reads_file_uris_and_streams_each_result(folder: Path, local_ray: None) -> None:
    from assembler.analysis.fleet.fleet_ray import analyze_batch_ray

    seen: list[str] = []
    uris = sources(folder.as_uri() + "/s00*.jsonl")
    assert len(uris) == 10 and all(u.startswith("file:///") for u in uris)
    report = analyze_batch_ray(uris, on_result=lambda r: seen.append(r.path))
    assert sorted(seen) == uris and not report.failures
    local = analyze_batch([str(folder / f"s00{i}.jsonl") for i in range(10)], workers=1)
    assert [s.read for s in report.sessions] == [s.read for s in local.sessions]
    assert [s.usd for s in report.sessions] == [s.usd for s in local.sessions]


@pytest.mark.slow
def test_cli_engine_ray_prints_the_batch_report(
    folder: Path, local_ray: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["analyze", str(folder / "s01*.jsonl"), "--engine", "ray", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["sessions"] == 10 and out["workers"] == 2


def test_without_ray_the_engine_is_one_line_naming_the_extra(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    assert main(["analyze", str(folder), "--engine", "ray"]) == 2
    err = capsys.readouterr().err
    assert err == "error: --engine ray needs ray, which is not installed: pip install .[fleet]\n"


def test_address_without_ray_engine_is_refused(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["analyze", str(folder), "--address", "auto", "--otlp", "/dev/null"]) == 2
    assert "--address applies to --engine ray" in capsys.readouterr().err
