"""The Codex calls of the real-traffic corpus whose billed read no prefix rule predicts.

Run: ``.venv/bin/python benchmarks/codex_unpredictable.py [--real DIR]``.
Imports and simulates every Codex rollout under the corpus (``../shared/real-traffic/codex``
beside the checkout) as ``agreement_report.py`` does, takes the steps whose simulated hit
ratio falls in another bin than the billed one, and sorts each by what its bill alone
shows, against the request before it in the same rollout (billed input ``P``, sent ``gap``
before; ``shared``: what the rollout's first request read, the part other sessions keep):

- ``read nothing``: the read is 0 although the request before left ``P`` ≥ 1,024 tokens
  cached less than the lifetime before: the provider served it where nothing was cached;
- ``only the shared part``: the read is at most ``shared``: served where only the part
  every session of the client sends was cached;
- ``an older or coarser entry``: more than the shared part but less than ``P`` rounded
  down to the model's step: an earlier, shorter request's entry, or a shard that rounds
  to coarser steps;
- ``less of the previous response``: at least ``P`` rounded down, but less than the
  simulation reads through the previous response (the read stopped inside it: inside the
  reasoning of a response that wrote a long tool call, or at a coarser step);
- ``kept past its lifetime``: after an idle gap longer than the lifetime the rules give,
  the provider still read the session's own history;
- ``other``: none of these (what a rule of ours gets wrong).

It measures and reports; it never fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from assembler.analysis.bill import billed_cost, hit_bin
from assembler.analysis.engine import analyze, import_file
from assembler.cache.rules import openai_retention, openai_rounding
from assembler.sessions.importers import ImporterError
from assembler.sessions.loader import parse_session

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real-traffic"
MINIMUM = 1024


def _floor(n: int, model: str) -> int:
    step, offset = openai_rounding(model)
    return 0 if n < MINIMUM else offset + (n - offset) // step * step


def classify(path: Path) -> tuple[int, list[tuple[int, str, float, float]]]:
    """Steps with a bill, and per step in another bin: (step, kind, billed $, simulated $)."""
    session = parse_session(json.dumps(import_file("codex", path)), f"{path.stem}.json")
    steps = [s for s in analyze(session).steps if s.measured is not None]
    out: list[tuple[int, str, float, float]] = []
    shared = steps[0].measured.cache_read if steps and steps[0].measured else 0
    for before, step in zip([None, *steps], steps, strict=False):
        m = step.measured
        assert m is not None
        total = m.input + m.cache_read + m.cache_write
        if hit_bin(step.read, step.tokens["total"]) == hit_bin(m.cache_read, total):
            continue
        kind = "other"
        if before is not None and before.measured is not None:
            b = before.measured
            previous = b.input + b.cache_read + b.cache_write
            gap = step.timestamp - before.timestamp
            lifetime = openai_retention(step.model, None).idle
            read = m.cache_read
            if gap > lifetime and read > shared:
                kind = "kept past its lifetime"
            elif gap <= lifetime and previous >= MINIMUM and read == 0:
                kind = "read nothing"
            elif gap <= lifetime and read <= shared:
                kind = "only the shared part"
            elif gap <= lifetime and read < _floor(previous, step.model):
                kind = "an older or coarser entry"
            elif gap <= lifetime and read < step.read:
                kind = "less of the previous response"
        usd = billed_cost(step) or 0.0
        out.append((step.step, kind, usd, step.usd))
    return len(steps), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", type=Path, default=REAL, help="the real-traffic corpus")
    args = parser.parse_args(argv)
    root = args.real / "codex"
    if not root.is_dir():
        sys.stdout.write(f"no Codex rollouts at {root}: skipped\n")
        return 0
    kinds: Counter[str] = Counter()
    costs: dict[str, float] = {}
    n_steps = 0
    lines: list[str] = []
    for path in sorted(root.rglob("*.jsonl")):
        try:
            n, found = classify(path)
        except ImporterError as e:
            lines.append(f"{path.relative_to(root)}: refused: {e}")
            continue
        n_steps += n
        lines.append(f"{path.relative_to(root)}: {len(found)} of {n} steps in another bin")
        for step, kind, billed, simulated in found:
            lines.append(
                f"  step {step}: {kind} (billed ${billed:.4f}, simulated ${simulated:.4f})"
            )
            kinds[kind] += 1
            costs[kind] = costs.get(kind, 0.0) + billed - simulated
    lines.append("")
    total = sum(kinds.values())
    lines.append(f"{total} of {n_steps} steps in another bin ({total / max(n_steps, 1):.1%}):")
    for kind, n in kinds.most_common():
        lines.append(f"  {kind}: {n} (billed minus simulated ${costs[kind]:+.2f})")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
