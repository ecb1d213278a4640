"""Benchmark: the CLI on real transcripts against the input floor, with start-up apart.

Run by hand::

    .venv/bin/python benchmarks/bench_real.py                  # the corpus, then 10× and 100×
    .venv/bin/python benchmarks/bench_real.py --scales 10      # a quicker run

On every Claude Code transcript and Codex rollout in ``../shared/real-traffic``
(skipped with one line when it is absent), and on transcripts generated from one
of them (``--base``, default ``subagent.jsonl``) at ``--scales`` times its size:
its turns repeated, each repetition opened by a compaction as a long session's
are (the context stays the size of the base's, as Claude Code keeps it under its
window), every id made unique and every time moved on. Generated files live in
a temporary folder for the run, compact as Claude Code writes them; nothing is written
into the project.

The app's part (upload to painted step and page switches in Chromium on a real server)
is ``benchmarks/bench_app_real.py``.

Per transcript, each path in a fresh interpreter:

- floor: read the file (and its subagent files) and tokenize every distinct
  string in it once with o200k: the least any analysis of it must do.
- import: ``python -m assembler import KIND FILE -o OUT.yaml``.
- analyze: ``python -m assembler analyze OUT.yaml --json`` to /dev/null.
- raw: ``python -m assembler analyze FILE --json`` on the transcript itself,
  where the CLI accepts one ("n/a" where it does not).

Start-up is measured apart: ``python -c pass`` (the interpreter), the package's
own imports for these commands, and each command on the one-request transcript
``short.jsonl`` (its fixed cost); "after start-up" subtracts the last. That
difference of two processes moves by a tenth of a second from run to run, as
much as a small transcript's whole analysis, so "warm×" measures it in one
process instead: ``analyze FILE --json`` timed in an interpreter that has just
run it on ``short.jsonl`` (the imports, the tokenizer and the prices loaded, the
parser and the built-in layout and components made) and imported the file's own
importer (a Codex rollout's is not the warm-up's); the token counts it memoized
dropped, so a prompt both transcripts hold is counted again. Best of at least
11 interpreters (``TURNS``) taken in turns with the floor's (a drift of the
machine's speed moves both alike), against the floor. The table
gives wall-clock seconds (best of ``--repeat``), the ratio of import + analyze
after start-up to the floor, the same in CPU seconds (user + system of each
process, which the machine's other work hardly moves), and the load average when
the row was measured: on a shared machine the wall-clock ratio moves with it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench_analyze import _strings, rss_mb

ENCODING = "o200k_base"
#: How Claude Code and Codex write a record: no blank after a comma or a colon.
COMPACT = (",", ":")
ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "real-traffic"
#: Fresh interpreters per row for the floor and for the warm command, taken in turns. One
#: run of either on this 2-core VM moves by half its time from one interpreter to the next
#: (the 0.75 MB rollout's warm command: 93–150 ms over five, its floor 56–95 ms); the best
#: of five still moved a ratio by a quarter between runs of the benchmark.
TURNS = 11
#: What a command imports before it reads its input.
IMPORTS = (
    "import assembler.cli.main, assembler.analysis.engine.analyzer,"
    " assembler.analysis.engine.importing, assembler.cache.prices.pricing, assembler.sessions.loader"
)


def floor_child(files: list[str]) -> dict[str, float]:
    """Read ``files`` and tokenize each distinct string once (run in a fresh interpreter)."""
    from assembler.cache.tokenizers import encoding

    encode = encoding(ENCODING).encode_ordinary  # loaded before any timing
    start, cpu = time.perf_counter(), time.process_time()
    distinct: set[str] = set()
    for name in files:
        with open(name, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    _strings(json.loads(line), distinct)
    tokens = sum(len(encode(s)) for s in distinct)
    return {
        "wall": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
        "tokens": tokens,
        "peak": rss_mb(),
    }


#: The importer each kind of file loads on its first use (the command imports it lazily).
IMPORTERS = {
    "claude-code": "assembler.sessions.importers.claude_code",
    "codex": "assembler.sessions.importers.codex",
}


def after_child(warm: str, file: str, kind: str) -> dict[str, float]:
    """``analyze FILE --json`` after start-up, in this (fresh) interpreter: the command run
    first on ``warm`` (a one-request transcript: the imports, the tokenizer, the prices)
    and the importer of ``kind`` imported (a Codex rollout's is not the warm-up's), the
    token counts it memoized dropped, then timed on ``file``, its output to /dev/null.

    The sink is opened before the timer, as a command's standard output is open before it
    starts: opening it and redirecting to it took 0.15 ms after the collection below
    (best of 11, measured), a sixteenth of the one-request transcript's command."""
    import gc
    import importlib

    from assembler.cache.tokenizers import counter
    from assembler.cli.main import main as cli

    sink = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  # open for the process

    def run(path: str) -> None:
        out, err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = sink
        try:
            status: object = cli(["analyze", path, "--json"])
        except SystemExit as exit:
            status = exit.code
        finally:
            sys.stdout, sys.stderr = out, err
        if status:  # a transcript the command refuses: no figure (n/a)
            raise SystemExit(f"{path}: analyze exited {status}")

    run(warm)
    importlib.import_module(IMPORTERS[kind])
    counter.cache_clear()  # a text both transcripts hold (a project's prompt) counted again
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    run(file)
    return {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu}


Timing = tuple[float, float]  # wall-clock and CPU seconds


def run_measured(args: list[str]) -> tuple[Timing, int, float]:
    """Wall-clock and CPU seconds (user + system), exit status and peak RSS (MB) of one
    command in its own process; the children it waited for (a pool's workers) are in its
    CPU and its peak. CPU time hardly moves with the machine's load; wall-clock does."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        args,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    timing = (wall, usage.ru_utime + usage.ru_stime)
    return timing, os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024


def _run(args: list[str]) -> tuple[Timing, int]:
    timing, status, _ = run_measured(args)
    return timing, status


def best_of(repeat: int, args: list[str]) -> Timing | None:
    """The fastest of ``repeat`` runs, wall and CPU each; None when the command fails (a
    transcript it does not accept)."""
    runs: list[Timing] = []
    for _ in range(repeat):
        timing, status = _run(args)
        if status:
            return None
        runs.append(timing)
    return min(w for w, _ in runs), min(c for _, c in runs)


def _best(a: Timing | None, b: Timing | None) -> Timing | None:
    if a is None or b is None:
        return b if a is None else a
    return min(a[0], b[0]), min(a[1], b[1])


def best_child(repeat: int, args: list[str]) -> Timing | None:
    """The fastest of ``repeat`` fresh interpreters running this file with ``args`` (a
    measuring child: it prints its own wall and CPU seconds); None when one fails."""
    runs: list[Timing] = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, __file__, *args],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
        )
        if out.returncode:
            return None
        child = json.loads(out.stdout)
        runs.append((float(child["wall"]), float(child["cpu"])))
    return min(w for w, _ in runs), min(c for _, c in runs)


def floor(files: list[Path], repeat: int) -> Timing:
    timing = best_child(repeat, ["--floor", *map(str, files)])
    assert timing is not None, "the floor's child failed"
    return timing


def _beside(transcript: Path) -> list[Path]:
    """The subagent files the importer reads with a Claude Code transcript."""
    folder = transcript.parent / transcript.stem / "subagents"
    return sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []


# --- generated transcripts ------------------------------------------------------------------

_IDS = frozenset(
    {"uuid", "parentUuid", "logicalParentUuid", "leafUuid", "requestId", "tool_use_id",
     "toolUseID", "parentToolUseID", "sourceToolAssistantUUID", "messageId", "id"}
)  # fmt: skip


def _moved(value: Any, suffix: str, shift: timedelta) -> Any:
    """``value`` with every id made unique by ``suffix`` and every timestamp moved by ``shift``."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k in _IDS and isinstance(v, str):
                out[k] = v + suffix
            elif k == "timestamp" and isinstance(v, str):
                at = datetime.fromisoformat(v.replace("Z", "+00:00")) + shift
                out[k] = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            else:
                out[k] = _moved(v, suffix, shift)
        return out
    if isinstance(value, list):
        return [_moved(v, suffix, shift) for v in value]
    return value


def _times(records: list[dict[str, Any]]) -> Iterator[datetime]:
    for r in records:
        t = r.get("timestamp")
        if isinstance(t, str):
            yield datetime.fromisoformat(t.replace("Z", "+00:00"))


def scaled(base: Path, factor: int, out: Path) -> Path:
    """``base`` at ``factor`` times its size: its records, then copies of them, each opened
    by a compaction (a boundary and a summary, as Claude Code writes them)."""
    records = [json.loads(x) for x in base.read_text("utf-8").splitlines() if x.strip()]
    times = list(_times(records))
    span = max(times) - min(times) + timedelta(minutes=1)
    last = next(r["uuid"] for r in reversed(records) if "uuid" in r)
    session = next(r["sessionId"] for r in records if "sessionId" in r)
    target = base.stat().st_size * factor
    written = 0
    with out.open("w", encoding="utf-8") as f:
        for r in records:
            line = json.dumps(r, ensure_ascii=False, separators=COMPACT)
            f.write(line + "\n")
            written += len(line.encode()) + 1
        copy = 0
        while written < target:
            copy += 1
            suffix, shift = f"-x{copy}", span * copy
            start = (min(times) + shift).isoformat(timespec="milliseconds")
            boundary = {
                "parentUuid": None, "logicalParentUuid": last, "isSidechain": False,
                "sessionId": session, "type": "system", "subtype": "compact_boundary",
                "content": "Conversation compacted", "isMeta": False,
                "timestamp": start.replace("+00:00", "Z"), "uuid": f"boundary{suffix}",
                "level": "info", "compactMetadata": {"trigger": "auto", "preTokens": 0},
            }  # fmt: skip
            summary = {
                "parentUuid": boundary["uuid"], "isSidechain": False, "sessionId": session,
                "type": "user", "isCompactSummary": True, "isVisibleInTranscriptOnly": True,
                "message": {"role": "user", "content": "This session is being continued from"
                            f" a previous conversation (part {copy})."},
                "uuid": f"summary{suffix}", "timestamp": boundary["timestamp"],
            }  # fmt: skip
            lines = [boundary, summary]
            for r in records:
                moved = _moved(r, suffix, shift)
                if "uuid" in r and r.get("parentUuid") is None:
                    moved["parentUuid"] = summary["uuid"]  # the copy continues the summary
                lines.append(moved)
                if "uuid" in r:
                    last = moved["uuid"]
            for r in lines:
                line = json.dumps(r, ensure_ascii=False, separators=COMPACT)
                f.write(line + "\n")
                written += len(line.encode()) + 1
    return out


# --- the table ------------------------------------------------------------------------------


def measure(
    kind: str, transcript: Path, work: Path, fixed: dict[str, Timing], repeat: int, short: Path
) -> dict[str, Any]:
    py = sys.executable
    session = work / f"{transcript.stem}.yaml"
    files = [transcript, *(_beside(transcript) if kind == "claude-code" else [])]
    row: dict[str, Any] = {
        "file": transcript.name,
        "MB": sum(p.stat().st_size for p in files) / 1e6,
        "load": os.getloadavg()[0],
        "floor": None,  # below, in turns with the warm command
        "import": best_of(
            repeat, [py, "-m", "assembler", "import", kind, str(transcript), "-o", str(session)]
        ),
    }
    row["analyze"] = (
        best_of(repeat, [py, "-m", "assembler", "analyze", str(session), "--json"])
        if row["import"] is not None
        else None
    )
    row["raw"] = best_of(repeat, [py, "-m", "assembler", "analyze", str(transcript), "--json"])
    # the floor and the warm command taken in turns, best of each, as many times each: a
    # drift of the machine's speed over the row's minutes moves both alike
    row["warm"] = None
    warm_args = ["--after", str(short), str(transcript), kind]
    for _ in range(max(repeat, TURNS)):
        row["floor"] = _best(row["floor"], floor(files, 1))
        row["warm"] = _best(row["warm"], best_child(1, warm_args))
    for k in (0, 1):  # wall, then CPU
        if row["import"] is not None and row["analyze"] is not None:
            after = row["import"][k] - fixed["import"][k] + row["analyze"][k] - fixed["analyze"][k]
            row.setdefault("after", []).append(after)
            row.setdefault("ratio", []).append(after / row["floor"][k])
        if row["raw"] is not None and "raw" in fixed:
            row.setdefault("raw_ratio", []).append(
                (row["raw"][k] - fixed["raw"][k]) / row["floor"][k]
            )
        if row["warm"] is not None:
            row.setdefault("warm_ratio", []).append(row["warm"][k] / row["floor"][k])
    return row


def startup(short: Path, work: Path, repeat: int) -> dict[str, Timing]:
    """The interpreter, the package's imports, and each command on a one-request transcript."""
    py = sys.executable
    session = work / "short.yaml"
    out: dict[str, Timing] = {}
    for name, args in (
        ("python", [py, "-c", "pass"]),
        ("imports", [py, "-c", IMPORTS]),
        (
            "import",
            [py, "-m", "assembler", "import", "claude-code", str(short), "-o", str(session)],
        ),
        ("analyze", [py, "-m", "assembler", "analyze", str(session), "--json"]),
        ("raw", [py, "-m", "assembler", "analyze", str(short), "--json"]),
    ):
        timing = best_of(max(repeat, 5), args)
        if timing is not None:
            out[name] = timing
    return out


def _cell(value: Any, k: int, unit: str = "") -> str:
    if value is None:
        return "n/a"
    return f"{value[k]:.1f}{unit}" if unit else f"{value[k]:.2f}"


def table(rows: list[dict[str, Any]]) -> list[str]:
    """Seconds wall-clock, then CPU: floor, import, analyze, both after start-up, their ratio
    to the floor, and analyze on the raw file after start-up against the floor."""
    cols = (
        f"{'floor':>6} {'import':>7} {'analyze':>8} {'after':>6} {'×floor':>7} {'raw×':>6}"
        f" {'warm×':>6}"
    )
    lines = [f"{'':<44} {'':>6} {'wall-clock s':^51} │ {'CPU s':^51}", ""]
    lines[1] = f"{'transcript':<44} {'MB':>6} {cols} │ {cols} {'load':>5}"
    for r in rows:
        cells = []
        for k in (0, 1):
            cells.append(
                f"{_cell(r['floor'], k):>6} {_cell(r['import'], k):>7}"
                f" {_cell(r['analyze'], k):>8} {_cell(r.get('after'), k):>6}"
                f" {_cell(r.get('ratio'), k, '×'):>7} {_cell(r.get('raw_ratio'), k, '×'):>6}"
                f" {_cell(r.get('warm_ratio'), k, '×'):>6}"
            )
        lines.append(
            f"{r['file'][:44]:<44} {r['MB']:>6.2f} {cells[0]} │ {cells[1]} {r['load']:>5.1f}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--base", default="subagent.jsonl", help="the transcript scaled up")
    parser.add_argument("--scales", type=int, nargs="*", default=[10, 100])
    parser.add_argument("--repeat", type=int, default=1, help="best of N per path")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--floor", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--after", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        print(json.dumps(floor_child(args.floor)))
        return
    if args.after:
        print(json.dumps(after_child(*args.after)))
        return
    claude = args.corpus / "claude-code"
    if not claude.is_dir():
        print(f"skipped: {args.corpus} is absent (the real corpus lives beside the checkout)")
        return
    transcripts = [("claude-code", p) for p in sorted(claude.glob("*/*.jsonl"))]
    transcripts += [("codex", p) for p in sorted((args.corpus / "codex").glob("*/*.jsonl"))]
    short = next(p for _, p in transcripts if p.name == "short.jsonl")
    base = next(p for _, p in transcripts if p.name == args.base)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        fixed = startup(short, work, args.repeat)
        names = {
            "python": "python -c pass",
            "imports": "the package's imports",
            "import": "import on a one-request transcript",
            "analyze": "analyze on its session",
            "raw": "analyze on it raw",
        }
        print(
            "start-up (wall / CPU s): "
            + " · ".join(f"{names[k]} {w:.2f} / {c:.2f}" for k, (w, c) in fixed.items())
            + f" (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
        rows = []
        for kind, path in transcripts:
            rows.append(measure(kind, path, work, fixed, args.repeat, short))
            print(table(rows)[-1] if len(rows) > 1 else "\n".join(table(rows)), flush=True)
        for factor in args.scales:
            path = scaled(base, factor, work / f"{base.stem}-{factor}x.jsonl")
            rows.append(measure("claude-code", path, work, fixed, args.repeat, short))
            print(table(rows)[-1], flush=True)
        print()
        print("\n".join(table(rows)))
        if args.json:
            args.json.write_text(json.dumps({"startup": fixed, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
