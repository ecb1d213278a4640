"""``--parquet DIR``: three tables written per session, read back with DuckDB."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.layouts import load_layout
from assembler.analysis.fleet.batch import BatchReport, Options
from assembler.analysis.fleet.fleet_sources import sources
from assembler.analysis.fleet.run import run_fleet
from assembler.analysis.reports.parquet_tables import BLOCK_COLUMNS, SESSION_COLUMNS, STEP_COLUMNS
from assembler.cli.main import main
from assembler.sessions.generator import generate_session, write_session
from assembler.sessions.loader import load_session

duckdb = pytest.importorskip("duckdb", reason="the fleet extra (make test installs it)")
DOCS = Path(__file__).parents[3] / "docs" / "fleet.md"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("sessions")
    for i in range(6):
        write_session(generate_session(3 + i, seed=100 + i), d / f"s{i}.jsonl")
    return d


@pytest.fixture(scope="module")
def written(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BatchReport]:
    out = tmp_path_factory.mktemp("parquet")
    report = run_fleet(sources(str(folder)), Options(), workers=2, parquet=str(out))
    return out, report


def q(root: Path, sql: str) -> list[tuple[object, ...]]:
    return duckdb.sql(sql.replace("DIR", str(root))).fetchall()  # type: ignore[no-any-return]


def test_duckdb_reads_the_hit_ratio_the_engine_computes(
    folder: Path, written: tuple[Path, BatchReport]
) -> None:
    root, _ = written
    expected = {}
    for p in sorted(folder.glob("*.jsonl")):
        a = analyze(load_session(p), load_layout("seed"))
        expected[a.session] = sum(s.read for s in a.steps) / sum(s.tokens["total"] for s in a.steps)
    got = dict(
        q(
            root,
            "select session_id, sum(cache_read) / sum(tokens) "
            "from read_parquet('DIR/steps/**/*.parquet') group by session_id",
        )
    )
    assert got.keys() == expected.keys()
    for sid, ratio in expected.items():
        assert got[sid] == pytest.approx(ratio, rel=1e-12)
    per_session = dict(q(root, "select session_id, hit_ratio from 'DIR/sessions/**/*.parquet'"))
    assert per_session == pytest.approx(expected, rel=1e-12)


def test_three_tables_with_the_documented_columns_partitioned_by_day(
    written: tuple[Path, BatchReport],
) -> None:
    root, report = written
    for table, columns in (
        ("sessions", SESSION_COLUMNS),
        ("steps", STEP_COLUMNS),
        ("blocks", BLOCK_COLUMNS),
    ):
        names = [r[0] for r in q(root, f"describe select * from 'DIR/{table}/**/*.parquet'")]
        assert names == [c for c, _ in columns] + ["date"], table
        documented = DOCS.read_text("utf-8")
        for column, _ in columns:
            assert f"`{column}`" in documented, (table, column)
    assert {p.name for p in (root / "steps").iterdir()} == {"date=2026-03-02"}
    assert q(root, "select count(*) from 'DIR/steps/**/*.parquet'") == [(report.steps,)]
    blocks = q(root, "select count(*), count(distinct session_id) from 'DIR/blocks/**/*.parquet'")
    assert blocks[0][0] > report.steps and blocks[0][1] == 6
    misses = q(
        root, "select count(*) from 'DIR/steps/**/*.parquet' where miss_component is not null"
    )
    assert misses == [(sum(n for s in report.sessions for _, n, _ in s.breakers),)]


def test_writing_again_replaces_each_sessions_files(
    folder: Path, written: tuple[Path, BatchReport]
) -> None:
    root, report = written
    run_fleet(sources(str(folder)), Options(), workers=1, parquet=str(root))
    assert q(root, "select count(*) from 'DIR/sessions/**/*.parquet'") == [(len(report.sessions),)]


def test_every_query_in_the_docs_runs(written: tuple[Path, BatchReport]) -> None:
    root, _ = written
    queries = re.findall(r"```sql\n(.*?)```", DOCS.read_text("utf-8"), re.S)
    assert len(queries) >= 4
    for sql in queries:  # each must run on these tables (a wrong column name fails)
        assert isinstance(q(root, sql), list), sql


def test_cli_writes_parquet_for_one_session_and_prints_its_table(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["analyze", str(folder / "s0.jsonl"), "--parquet", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("session ")
    assert q(tmp_path, "select steps from 'DIR/sessions/**/*.parquet'") == [(3,)]


def test_startup_imports_none_of_the_fleet_packages() -> None:
    import subprocess
    import sys

    code = (
        "import sys, assembler\n"
        "from assembler.cli.main import build_parser\n"
        "build_parser()\n"
        "print(sorted(m for m in ('ray', 'pyarrow', 'duckdb') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
