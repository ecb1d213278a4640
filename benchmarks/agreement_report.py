"""Agreement report: the simulator against the bill, on recorded real traffic and on the
hand-made importer fixtures.

Run: ``.venv/bin/python benchmarks/agreement_report.py [--real DIR] [--fixtures-only]``.
Imports every Claude Code transcript, Codex rollout and request log under the real-traffic
corpus (``../shared/real-traffic`` beside the checkout, when present) and under
``tests/sessions/importers/fixtures`` (each main file; subagent and compaction files come
with their session), analyses it at its recorded provider and model, and prints per file,
per source and over each group: class agreement (full hit / partial / miss), false alarms,
the share of steps in the billed hit-ratio bin, billed against simulated cost, breaks of
prefix continuity per cause, the read error in units of the provider's read granularity
and the count per reason. A file its importer refuses is named with the line it gives.
It measures and reports; it never fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from assembler.analysis.bill import Fidelity, agreement_lines, fidelity, fidelity_lines
from assembler.analysis.engine import analyze, import_file
from assembler.sessions.importers import ImporterError
from assembler.sessions.loader import parse_session

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "sessions" / "importers" / "fixtures"
REAL = ROOT.parent / "shared" / "real-traffic"


def fixture_files(root: Path) -> list[tuple[str, Path]]:
    """(format, file) for every main file: subagent transcripts are read with their session."""
    out: list[tuple[str, Path]] = []
    for path in sorted(root.rglob("*.jsonl")):
        rel = path.relative_to(root).as_posix()
        # capture/ holds requests/proxy.jsonl's calls again, as captured: counted once
        if "/subagents/" in f"/{rel}" or rel.startswith("capture/"):
            continue
        if rel.startswith("requests/"):
            out.append(("requests", path))
        elif "codex" in rel or path.name.startswith("rollout-"):
            out.append(("codex", path))
        else:
            out.append(("claude-code", path))
    return out


@dataclass(frozen=True)
class Measured:
    """One file: its figures, or the line its importer refused it with."""

    fmt: str
    path: Path
    fidelity: Fidelity | None
    refused: str | None = None


def measure_file(fmt: str, path: Path) -> Measured:
    try:
        data = import_file(fmt, path)
    except ImporterError as e:
        return Measured(fmt, path, None, str(e))
    session = parse_session(json.dumps(data), f"{path.stem}.json")
    return Measured(fmt, path, fidelity(session, analyze(session)))


def measure(root: Path) -> list[Measured]:
    return [measure_file(fmt, path) for fmt, path in fixture_files(root)]


def source_of(root: Path, path: Path) -> str:
    """The folder two levels down (``claude-code/<source>``), or the format folder."""
    parts = path.relative_to(root).parts
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def report(root: Path, title: str) -> list[str]:
    lines = [f"== {title}: {root}", ""]
    groups: dict[str, Fidelity] = {}
    for m in measure(root):
        rel = m.path.relative_to(root).as_posix()
        if m.fidelity is None:
            lines += [f"{rel} ({m.fmt}): refused: {m.refused}", ""]
            continue
        f = m.fidelity
        lines += [f"{rel} ({m.fmt})", *fidelity_lines(f), *agreement_lines(f.agreement)[1:], ""]
        key = source_of(root, m.path)
        groups[key] = groups.get(key, Fidelity()) + f
    for key, f in groups.items():
        lines += [f"{key} ({f.sessions} sessions)", *fidelity_lines(f), ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", type=Path, default=REAL, help="the real-traffic corpus")
    parser.add_argument("--fixtures-only", action="store_true")
    args = parser.parse_args(argv)
    lines: list[str] = []
    if not args.fixtures_only:
        if args.real.is_dir():
            lines += report(args.real, "recorded real traffic")
        else:
            lines += [f"no real-traffic corpus at {args.real}: skipped", ""]
    lines += report(FIXTURES, "hand-made fixtures")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
