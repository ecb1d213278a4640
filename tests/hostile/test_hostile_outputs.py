"""Every output flag against what an output path may name: a device, a FIFO, a symlink to
either, the input itself (or a link to it), a folder nobody may write in. One line, exit 2,
nothing deleted, changed or left half-written, and no hang: the child runs on a timeout.

The device and the FIFO are private ones made in a temporary folder (a character device
with /dev/null's numbers: we may run as root), never the system's own nodes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from build import CLAUDE, session_json

from assembler.output_files import replacing, write_text
from tests.hostile.runner import run_cli

TIMEOUT = 60.0  # a FIFO opened for writing would wait for ever: the child is killed past this
SETPRIV = shutil.which("setpriv")

# flag name → (argv with {in} / {out}, what {in} is, the output's suffix)
FLAGS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "import -o": (("import", "claude-code", "{in}", "-o", "{out}"), "claude", ".jsonl"),
    "generate -o": (("generate", "--steps", "2", "-o", "{out}"), "", ".yaml"),
    "recommend -o": (("recommend", "{in}", "-o", "{out}"), "session", ".yaml"),
    "compare --junit": (
        ("compare", "{in}", "--base", "seed", "--head", "date-in-l0", "--junit", "{out}"),
        "session",
        ".xml",
    ),
    "analyze --otlp": (("analyze", "{in}", "--otlp", "{out}"), "session", ".jsonl"),
    "analyze FOLDER --otlp": (("analyze", "{folder}", "--otlp", "{out}"), "session", ".jsonl"),
    "analyze --parquet": (("analyze", "{in}", "--parquet", "{out}"), "session", ""),
}
TARGETS = ("device", "fifo", "link-to-device", "link-to-fifo", "input", "link-to-input", "no-write")


def snapshot(root: Path) -> dict[str, tuple[int, bytes | str | None]]:
    """Every entry under ``root``: its kind, and a file's bytes or a link's target."""
    out: dict[str, tuple[int, bytes | str | None]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        kind = stat.S_IFMT(info.st_mode)
        body: bytes | str | None = None
        if stat.S_ISREG(info.st_mode):
            body = path.read_bytes()
        elif stat.S_ISLNK(info.st_mode):
            body = os.readlink(path)
        out[str(path.relative_to(root))] = (kind, body)
    return out


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "s.json").write_text(session_json_two_calls(), "utf-8")
    (tmp_path / "claude").mkdir()
    shutil.copy(CLAUDE, tmp_path / "claude" / "session.jsonl")
    with contextlib.suppress(PermissionError):  # making a device node needs root
        os.mknod(tmp_path / "dev", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link-to-device").symlink_to(
        tmp_path / "dev" if (tmp_path / "dev").exists() else "/nowhere"
    )
    (tmp_path / "link-to-fifo").symlink_to(tmp_path / "fifo")
    (tmp_path / "ro").mkdir(mode=0o555)
    yield tmp_path
    (tmp_path / "ro").chmod(0o755)


def session_json_two_calls() -> str:
    doc = json.loads(session_json())
    doc["events"].insert(
        1, {"type": "llm", "input": "q0", "output": "a0", "at": "2026-03-02T09:00:00Z"}
    )
    return json.dumps(doc)


def _argv(flag: str, ws: Path, out: Path) -> tuple[list[str], Path | None]:
    template, source, _ = FLAGS[flag]
    given = {"claude": ws / "claude" / "session.jsonl", "session": ws / "sessions" / "s.json"}
    inp = given.get(source)
    values = {"in": str(inp), "out": str(out), "folder": str(ws / "sessions")}
    return [a.format(**values) for a in template], inp


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("flag", list(FLAGS))
def test_output_refused_and_nothing_touched(flag: str, target: str, ws: Path) -> None:
    _, source, suffix = FLAGS[flag]
    prefix: tuple[str, ...] = ()
    if target in ("input", "link-to-input"):
        if not source:
            pytest.skip(f"{flag} reads no input")
        inp = _argv(flag, ws, ws)[1]
        assert inp is not None
        out = inp
        if target == "link-to-input":
            out = ws / f"link-to-input{inp.suffix}"
            out.symlink_to(inp)
    elif target == "no-write":
        out = ws / "ro" / f"out{suffix}"
        if os.geteuid() == 0:  # root writes anywhere: the child runs without that right
            if SETPRIV is None:
                pytest.skip("setpriv is not installed: root cannot be kept out of a folder")
            prefix = (SETPRIV, "--bounding-set=-dac_override", "--inh-caps=-dac_override")
    else:
        if "device" in target and not (ws / "dev").exists():
            pytest.skip("no device node: making one needs root")
        out = ws / {"device": "dev"}.get(target, target)
    argv, _ = _argv(flag, ws, out)
    before = snapshot(ws)
    peak = ws.parent / f"{ws.name}.peak"  # outside the folder compared
    run = run_cli(argv, peak, timeout=TIMEOUT, prefix=prefix)
    assert run.seconds < TIMEOUT, f"{flag} into a {target} hung"
    assert run.code == 2, (run.code, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert str(out) in lines[0] and "Traceback" not in lines[0], lines[0]
    assert snapshot(ws) == before  # nothing deleted, changed, or left beside the target


def test_import_replaces_a_good_file_whole_and_keeps_its_mode(ws: Path) -> None:
    out = ws / "earlier.jsonl"
    out.write_text("earlier\n", "utf-8")
    out.chmod(0o640)
    run = run_cli(["import", "claude-code", str(CLAUDE), "-o", str(out)], ws.parent / "p")
    assert run.code == 0, run.stderr
    assert out.read_text("utf-8").startswith('{"format": "context-session/1"')
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert sorted(p.name for p in ws.iterdir() if p.name.startswith(".")) == []


def test_a_link_to_a_file_is_followed_and_stays_a_link(ws: Path) -> None:
    real = ws / "real.yaml"
    real.write_text("earlier\n", "utf-8")
    link = ws / "link.yaml"
    link.symlink_to(real)
    run = run_cli(["generate", "--steps", "2", "-o", str(link)], ws.parent / "p")
    assert run.code == 0, run.stderr
    assert link.is_symlink() and "format: context-session/1" in real.read_text("utf-8")


@pytest.mark.parametrize(
    ("suffix", "check"),
    # JSON Lines are checked as the loader reads them before they are written, YAML is read back
    [(".jsonl", "session_from_document"), (".yaml", "load_session")],
)
def test_import_that_does_not_load_back_leaves_the_earlier_file(
    ws: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    suffix: str,
    check: str,
) -> None:
    from assembler.cli import import_commands, main
    from assembler.sessions.model import SessionError

    def refuses(path: object, *args: object, **kwargs: object) -> None:
        source = str(args[0]) if args else str(path)  # session_from_document(data, source)
        raise SessionError(source, "expected text", line=1, field="session.id")

    monkeypatch.setattr(import_commands, check, refuses)
    out = ws / f"earlier{suffix}"
    out.write_text("earlier\n", "utf-8")
    before = snapshot(ws)
    assert main(["import", "claude-code", str(CLAUDE), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{out}:1: session.id:" in err, err
    assert snapshot(ws) == before


def test_a_failed_block_leaves_the_target_and_no_temporary(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    out.write_text("earlier\n", "utf-8")
    with pytest.raises(RuntimeError), replacing(out, "-o") as temp:
        temp.write_text("half", "utf-8")
        raise RuntimeError("stopped half-way")
    assert [p.name for p in tmp_path.iterdir()] == ["o.jsonl"]
    assert out.read_text("utf-8") == "earlier\n"
    write_text(out, "whole\n", "-o")
    assert out.read_text("utf-8") == "whole\n" and len(list(tmp_path.iterdir())) == 1


def test_parquet_tables_are_written_all_three_or_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    from assembler.analysis.engine import analyze, builtin_layout
    from assembler.analysis.reports import write_session_tables
    from assembler.sessions.loader import parse_session

    session = parse_session(session_json_two_calls(), "s.json")
    a = analyze(session, builtin_layout("seed"))
    real = pq.write_table
    calls: list[str] = []

    def fails_on_blocks(table: object, where: str, **kwargs: object) -> None:
        calls.append(where)
        if "/blocks/" in where:
            raise OSError(28, "No space left on device")
        real(table, where, **kwargs)

    monkeypatch.setattr(pq, "write_table", fails_on_blocks)
    with pytest.raises(OSError):
        write_session_tables(a, session, "s.json", str(tmp_path / "pq"))
    assert len(calls) == 3
    assert [p for p in (tmp_path / "pq").rglob("*") if p.is_file()] == []


def test_parquet_to_a_filesystem_that_keeps_nothing_is_an_error(ws: Path) -> None:
    pytest.importorskip("pyarrow")
    session = ws / "sessions" / "s.json"
    for target in (str(session), str(ws / "sessions")):
        run = run_cli(["analyze", target, "--parquet", "mock:///x"], ws.parent / "p")
        assert run.code == 2, run.stderr
        line = run.stderr.strip()
        assert len(line.splitlines()) == 1 and "mock:///x: --parquet: nothing is there" in line


def test_a_failed_batch_leaves_no_spans_folder_and_no_file(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import assembler.analysis.fleet.run as fleet
    from assembler.analysis.fleet import Options

    def dies(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the pool died")

    monkeypatch.setattr(fleet, "analyze_batch", dies)
    out = ws / "spans.jsonl"
    before = snapshot(ws)
    with pytest.raises(RuntimeError):
        fleet.run_fleet([str(ws / "sessions" / "s.json")], Options(), otlp=str(out))
    assert snapshot(ws) == before


def test_a_subagent_transcript_the_import_reads_is_an_input_too(tmp_path: Path) -> None:
    shutil.copytree(CLAUDE.parent, tmp_path / "cc")
    agent = tmp_path / "cc" / "subagents" / "agent-a1b2c3.jsonl"
    before = snapshot(tmp_path / "cc")
    argv = ["import", "claude-code", str(tmp_path / "cc" / "session.jsonl"), "-o", str(agent)]
    run = run_cli(argv, tmp_path / "p", timeout=TIMEOUT)
    assert run.code == 2 and f"{agent}: -o: this is the input" in run.stderr, run.stderr
    assert snapshot(tmp_path / "cc") == before
