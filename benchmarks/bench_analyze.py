"""Benchmark: ``analyze`` against a naive per-request tokenizer and the floor.

Run by hand: ``.venv/bin/python benchmarks/bench_analyze.py [--steps 100 1000 5000]
[--provider openai --model gpt-5]``.

On generated sessions (``assembler.sessions.generator.generate_session``), in one process:

- analyze: ``assembler.analysis.engine.analyze`` (replay, assemble, tokens per
  distinct line, Anthropic cache simulation, genai-prices cost).
- naive: what trace tools do per request: assemble the step, render the whole
  request (``wire.text()`` plus the tools JSON) and tokenize all of it with a
  fresh, un-memoized counter.
- floor: assemble every step and tokenize each distinct block text once.
- assemble: assembling every step and nothing else (the part all three share).

Each path runs on a freshly parsed session with empty token memos. Time is
wall-clock without tracing; peak memory is a second run under tracemalloc.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

from assembler.analysis.engine import analyze
from assembler.analysis.pipeline import SessionAssembler
from assembler.cache import tokenizers as tokens
from assembler.cache.tokenizers import TokenCounter, encoding
from assembler.design.calltree_yaml import clear_caches as clear_tree_caches
from assembler.sessions.generator import generate_session
from assembler.sessions.loader import parse_session
from assembler.sessions.model import Session

ENCODING = "o200k_base"


def fresh_session(steps: int, seed: int) -> Session:
    return parse_session(json.dumps(generate_session(steps, seed)), f"<generated {steps}>")


def reset_memos() -> None:
    tokens.counter.cache_clear()
    clear_tree_caches()
    gc.collect()


#: ``--provider`` / ``--model``: the analyze path prices and caches for them
#: (the session's own, Anthropic claude-sonnet-4-5, by default).
TARGET: dict[str, str] = {}


def run_analyze(session: Session) -> int:
    a = analyze(session, provider=TARGET.get("provider"), model=TARGET.get("model"))
    return int(a.totals["tokens"])


def run_naive(session: Session) -> int:
    total = 0
    for step in SessionAssembler(session):
        wire = step.wire
        tools_json = "".join(b.text for b in wire.section("tools"))
        fresh = TokenCounter(ENCODING)  # a new, empty memo for every request
        total += fresh.count(tools_json + "\n\n" + wire.text())
    return total


def run_floor(session: Session) -> int:
    distinct: set[str] = set()
    for step in SessionAssembler(session):
        distinct.update(b.text for b in step.wire.blocks)
    encode = encoding(ENCODING).encode_ordinary
    return sum(len(encode(text)) for text in distinct)


def run_assemble(session: Session) -> int:
    return sum(len(step.wire.blocks) for step in SessionAssembler(session))


PATHS: dict[str, Callable[[Session], int]] = {
    "analyze": run_analyze,
    "naive": run_naive,
    "floor": run_floor,
    "assemble": run_assemble,
}


@dataclass(frozen=True)
class Measure:
    seconds: float
    peak_mb: float


def measure(path: Callable[[Session], int], steps: int, seed: int) -> Measure:
    session = fresh_session(steps, seed)
    reset_memos()
    start = time.perf_counter()
    path(session)
    seconds = time.perf_counter() - start
    session = fresh_session(steps, seed)
    reset_memos()
    tracemalloc.start()
    path(session)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return Measure(seconds, peak / 1e6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--steps", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--provider", help="simulate this provider's cache in the analyze path")
    parser.add_argument("--model", help="with --provider: the model to price and cache for")
    args = parser.parse_args()
    if bool(args.provider) != bool(args.model):
        parser.error("--provider and --model go together")
    if args.provider:
        TARGET.update(provider=args.provider, model=args.model)
    encoding(ENCODING)  # load the encoding before any timing
    header = (
        f"{'steps':>6}  {'path':<9}{'time s':>9}  {'peak MB':>8}  "
        f"{'naive/analyze':>13}  {'analyze/floor':>13}"
    )
    print(header)
    print("-" * len(header))
    for steps in args.steps:
        results = {name: measure(fn, steps, args.seed) for name, fn in PATHS.items()}
        a, n, f = results["analyze"], results["naive"], results["floor"]
        for name, m in results.items():
            ratios = ("", "")
            if name == "analyze":
                ratios = (f"{n.seconds / a.seconds:.1f}x", f"{a.seconds / f.seconds:.2f}x")
            print(
                f"{steps:>6}  {name:<9}{m.seconds:>9.2f}  {m.peak_mb:>8.1f}  "
                f"{ratios[0]:>13}  {ratios[1]:>13}"
            )


if __name__ == "__main__":
    main()
