"""Benchmark: ``usage`` over a folder of many real-shaped sessions, against the floor per core.

Run by hand::

    .venv/bin/python benchmarks/bench_folder.py                 # 500 sessions
    .venv/bin/python benchmarks/bench_folder.py --sessions 100  # a quicker run

The folder is made, in a temporary directory, of copies of the real corpus
(``../shared/real-traffic``; skipped with one line when it is absent): every Claude
Code transcript with its subagent files and every Codex rollout the importers read,
taken in turn. Each copy gets its own ids (its session's file and folder names too)
and its own texts: every text a message carries ends in a mark of the copy, so no
two sessions share a conversation, as two real sessions do not (they share what the
agent sends every time, which the tokenizer's memo may then count once, in the
floor as in the command). Records are written compact, as the agents write them (a
record written with blanks after its colons took a slower path of the importers' scan
for odd token counts until that was fixed).

Measured, each in a fresh interpreter:

- floor: read every file of the folder and tokenize each distinct string once with
  o200k (CPU seconds), divided by the cores: the least a run on every core must do;
- ``usage FOLDER --json``: wall-clock and CPU seconds (its workers included), and the
  largest peak RSS of its processes, on the whole folder and on a fifth of it (memory
  must not grow with the number of sessions);
- its start-up: the same command on a folder of one one-request transcript.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench_real import COMPACT, CORPUS, _beside, _moved, run_measured
from bench_real import floor as floor_of

#: Keys whose string value is a text a message carries (Claude Code and Codex).
_TEXTS = frozenset({"text", "content", "output"})


def _marked(value: Any, mark: str) -> Any:
    """``value`` with every text a message carries ending in ``mark``."""
    if isinstance(value, dict):
        return {
            k: (v + mark if k in _TEXTS and isinstance(v, str) and v else _marked(v, mark))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_marked(v, mark) for v in value]
    return value


def _copy_file(source: Path, target: Path, n: int, session: str | None) -> None:
    suffix = f"-s{n}"
    with source.open(encoding="utf-8") as f, target.open("w", encoding="utf-8") as out:
        for line in f:
            if not line.strip():
                continue
            record = _marked(_moved(json.loads(line), suffix, timedelta(0)), f" [s{n}]")
            if session is not None and record.get("sessionId") == session:
                record["sessionId"] = session + suffix
            out.write(json.dumps(record, ensure_ascii=False, separators=COMPACT) + "\n")


def _readable(corpus: Path) -> list[tuple[str, Path]]:
    """The corpus's transcripts and rollouts the importers read (one that names no model,
    or a subagent file without its session, is left out)."""
    from assembler.analysis.engine import import_session
    from assembler.sessions.importers import ImporterError

    found = [("claude-code", p) for p in sorted((corpus / "claude-code").glob("*/*.jsonl"))]
    found += [("codex", p) for p in sorted((corpus / "codex").glob("*/*.jsonl"))]
    out = []
    for kind, path in found:
        try:
            import_session(kind, path)
        except ImporterError:
            continue
        out.append((kind, path))
    return out


def make_folder(sources: list[tuple[str, Path]], count: int, folder: Path) -> int:
    """``count`` copies of ``sources`` taken in turn, in eight project folders; their bytes."""
    for n in range(count):
        kind, source = sources[n % len(sources)]
        project = folder / f"project-{n % 8}"
        project.mkdir(parents=True, exist_ok=True)
        stem = f"{source.stem}-s{n}"
        session = source.stem if kind == "claude-code" else None
        _copy_file(source, project / f"{stem}.jsonl", n, session)
        for agent in _beside(source) if kind == "claude-code" else []:
            subagents = project / stem / "subagents"
            subagents.mkdir(parents=True, exist_ok=True)
            _copy_file(agent, subagents / agent.name, n, session)
    return sum(p.stat().st_size for p in folder.rglob("*.jsonl"))


def floor_cpu(folder: Path) -> float:
    """CPU seconds to read the folder and tokenize each distinct string once."""
    return floor_of(sorted(folder.rglob("*.jsonl")), 1)[1]


def usage_run(folder: Path) -> tuple[float, float, float]:
    """Wall-clock and CPU seconds of ``usage FOLDER --json`` (workers included), and the
    largest peak RSS (MB) of its processes."""
    (wall, cpu), status, peak = run_measured(
        [sys.executable, "-m", "assembler", "usage", str(folder), "--json"]
    )
    if status:
        raise SystemExit(f"usage {folder} failed")
    return wall, cpu, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--sessions", type=int, default=500)
    args = parser.parse_args()
    if not (args.corpus / "claude-code").is_dir():
        print(f"skipped: {args.corpus} is absent (the real corpus lives beside the checkout)")
        return
    cores = os.cpu_count() or 1
    sources = _readable(args.corpus)
    short = [s for s in sources if s[1].name == "short.jsonl"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        one = work / "one"
        make_folder(short, 1, one)
        fixed = min(usage_run(one)[0] for _ in range(3))
        print(f"start-up: usage on one one-request transcript {fixed:.2f} s", flush=True)
        rows = []
        for count in (max(1, args.sessions // 5), args.sessions):
            folder = work / f"folder-{count}"
            size = make_folder(sources, count, folder)
            floor = floor_cpu(folder)
            wall, cpu, peak = usage_run(folder)
            after = wall - fixed
            rows.append((count, size, floor, wall, cpu, after, after / (floor / cores), peak))
            print(
                f"{count} sessions ({size / 1e6:.0f} MB): floor {floor:.1f} s of CPU "
                f"({floor / cores:.1f} s per core); usage {wall:.1f} s wall, {cpu:.1f} s CPU, "
                f"{after:.1f} s after start-up = {after / (floor / cores):.1f}× the floor per "
                f"core; peak RSS {peak:.0f} MB",
                flush=True,
            )
            shutil.rmtree(folder)
        print()
        print(f"| sessions | MB | floor CPU | floor / {cores} cores | usage wall | usage CPU | "
              "after start-up | × floor per core | peak RSS |")  # fmt: skip
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for count, size, floor, wall, cpu, after, ratio, peak in rows:
            print(
                f"| {count} | {size / 1e6:.0f} | {floor:.1f} s | {floor / cores:.1f} s | "
                f"{wall:.1f} s | {cpu:.1f} s | {after:.1f} s | {ratio:.1f}× | {peak:.0f} MB |"
            )


if __name__ == "__main__":
    main()
