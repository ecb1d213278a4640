"""Benchmark: ``recommend`` against one ``analyze`` of the same session, side by side.

Run by hand: ``.venv/bin/python benchmarks/bench_recommend.py [--steps 1000] [--seed 0]``.

On a generated session (``assembler.sessions.generator.generate_session``), in one process,
after one warm-up run on a small session (encodings and price tables loaded),
each on a freshly parsed session with empty token memos:

- analyze: one ``assembler.analysis.engine.analyze`` under the seed layout.
- recommend: ``assembler.analysis.advice.recommend`` from the seed layout: one trace per
  arrangement and per candidate call-tree budget tried, the breakpoint search for each
  lifetime and, on the winner, for a lifetime per breakpoint, then ``analyze`` of the
  current and the recommended layout to bill them as ``compare`` does.

Prints both times and their ratio (the target is at most 10×). It measures and reports;
it never fails on wall-clock.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import TypeVar

from assembler.analysis.advice import recommend
from assembler.analysis.engine import analyze, builtin_layout
from assembler.cache import tokenizers as tokens
from assembler.design.calltree_yaml import clear_caches as clear_tree_caches
from assembler.sessions.generator import generate_session
from assembler.sessions.loader import parse_session
from assembler.sessions.model import Session

T = TypeVar("T")


def fresh_session(steps: int, seed: int) -> Session:
    return parse_session(json.dumps(generate_session(steps, seed)), f"<generated {steps}>")


def timed(run: Callable[[Session], T], steps: int, seed: int) -> tuple[float, T]:
    session = fresh_session(steps, seed)
    tokens.counter.cache_clear()
    clear_tree_caches()
    gc.collect()
    start = time.perf_counter()
    result = run(session)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    seed_layout = builtin_layout("seed")
    # load the encodings and the price tables once, so neither side pays for them
    recommend([fresh_session(20, args.seed + 1)], seed_layout)
    t_analyze, a = timed(lambda s: analyze(s, seed_layout), args.steps, args.seed)
    t_recommend, r = timed(lambda s: recommend([s], seed_layout), args.steps, args.seed)
    usd = a.totals["usd"]
    print(f"session: {args.steps:,} generated steps (seed {args.seed})")
    print(f"analyze    {t_analyze:7.2f} s   ${usd:.4f}")
    print(
        f"recommend  {t_recommend:7.2f} s   ${r.after_usd:.4f} "
        f"(from ${r.before_usd:.4f}; {r.nodes:,} search branches)"
    )
    print(f"ratio      {t_recommend / t_analyze:7.1f} × one analyze (target ≤ 10×)")


if __name__ == "__main__":
    main()
