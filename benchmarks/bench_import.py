"""Benchmark: import time per MB for each format, side by side with reading the file.

Run by hand::

    .venv/bin/python benchmarks/bench_import.py                 # 500 to 4,000 turns
    .venv/bin/python benchmarks/bench_import.py --turns 1000    # one size

For each format (Claude Code transcript, Codex rollout, request log of chained
Responses requests, OTel traces) a transcript of ``--turns`` user turns is generated
(``tests/hostile/long_transcripts.py``: the importers' fixture shapes, repeated) in a
temporary folder. Each is measured in a fresh interpreter under a 3 GB address-space
cap: reading it (the bytes, and every line parsed as JSON: the least an import must
do) and importing it (``assembler.import_file``), in CPU seconds (user + system, which
the machine's other work hardly moves) and the peak resident size. Time per MB of
input shows whether an import is linear: its figure stays flat as the input grows.
Nothing is written into the project.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.hostile.long_transcripts import claude_code, codex, otel_spans, request_log  # noqa: E402

FORMATS: dict[str, tuple[str, Callable[[int], str]]] = {
    "claude-code": ("t.jsonl", claude_code),
    "codex": ("t.jsonl", codex),
    "requests": ("t.jsonl", request_log),
    "otel": ("t.json", otel_spans),
}
CHILD = """
import json, resource, sys, time
from pathlib import Path
fmt, path = sys.argv[1], Path(sys.argv[2])
start = time.process_time()
raw = path.read_bytes()
for line in raw.split(b"\\n"):
    if line.strip():
        json.loads(line)
read = time.process_time() - start
from assembler.analysis.engine import import_session
from assembler.cache.tokenizers import counter
counter("o200k_base").count("warm")  # the encoding's load is start-up, not import
start = time.process_time()
import_session(fmt, path)
done = time.process_time() - start
peak = 0
for row in Path("/proc/self/status").read_text().splitlines():
    if row.startswith("VmHWM:"):
        peak = int(row.split()[1]) * 1024
print(json.dumps({"read": read, "import": done, "peak": peak}))
"""
CAP = 3 * 1024 * 1024 * 1024


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def measure(fmt: str, path: Path, timeout: float) -> dict[str, float] | str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, fmt, str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            preexec_fn=_cap,
        )
    except subprocess.TimeoutExpired:
        return f"over {timeout:.0f} s"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return f"failed: {last[:60]}"
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="*", default=[500, 1000, 2000, 4000])
    parser.add_argument("--formats", nargs="*", default=list(FORMATS))
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} (2 cores shared); CPU seconds, best of 1")
    print(
        f"{'format':12} {'turns':>6} {'MB':>6} {'read s':>7} {'import s':>9} "
        f"{'read s/MB':>9} {'import s/MB':>11} {'×read':>6} {'peak MB':>8}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        for fmt in args.formats:
            name, make = FORMATS[fmt]
            for turns in args.turns:
                path = Path(tmp) / f"{fmt}-{turns}-{name}"
                path.write_text(make(turns), "utf-8")
                mb = path.stat().st_size / 1e6
                got = measure(fmt, path, args.timeout)
                if isinstance(got, str):
                    print(f"{fmt:12} {turns:>6} {mb:>6.1f} {got}")
                    continue
                read, imp = got["read"], got["import"]
                print(
                    f"{fmt:12} {turns:>6} {mb:>6.1f} {read:>7.2f} {imp:>9.2f} "
                    f"{read / mb:>9.3f} {imp / mb:>11.3f} {imp / max(read, 1e-9):>6.1f} "
                    f"{got['peak'] / 1e6:>8.0f}"
                )
                path.unlink()


if __name__ == "__main__":
    main()
