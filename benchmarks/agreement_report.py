"""Agreement report: the simulator against the bill on every importer fixture.

Run: ``.venv/bin/python benchmarks/agreement_report.py``. Imports every transcript,
rollout and request log under ``tests/sessions/importers/fixtures`` (each main file;
subagent and compaction files come with their session), analyses it, compares each
step's simulated cache read with the billed one, and prints per file and over all of
them: class agreement (full hit / partial / miss), whether the reads ended in the same
block, the read error in units of the provider's read granularity, and the count per
reason. It measures and reports; it never fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

from assembler.analysis.bill import Agreement, agreement, agreement_lines, compare_measured
from assembler.analysis.engine import analyze, import_file
from assembler.sessions.loader import parse_session

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "sessions" / "importers" / "fixtures"


def fixture_files(root: Path) -> list[tuple[str, Path]]:
    """(format, file) for every main file: subagent transcripts are read with their session."""
    out: list[tuple[str, Path]] = []
    for path in sorted(root.rglob("*.jsonl")):
        rel = path.relative_to(root).as_posix()
        if "/subagents/" in f"/{rel}":
            continue
        if rel.startswith("requests/"):
            out.append(("requests", path))
        elif "codex" in rel or path.name.startswith("rollout-"):
            out.append(("codex", path))
        else:
            out.append(("claude-code", path))
    return out


def report(root: Path = FIXTURES) -> tuple[list[str], Agreement]:
    import json

    lines: list[str] = []
    total = Agreement()
    for fmt, path in fixture_files(root):
        data = import_file(fmt, path)
        session = parse_session(json.dumps(data), f"{path.stem}.json")
        a = agreement(compare_measured(analyze(session)))
        total = total + a
        lines += [f"{path.relative_to(root).as_posix()} ({fmt})", *agreement_lines(a), ""]
    lines += ["all fixtures", *agreement_lines(total)]
    return lines, total


def main() -> int:
    lines, _ = report()
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
