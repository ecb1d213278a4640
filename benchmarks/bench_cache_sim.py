"""Benchmark: what one step of the cache simulation costs (``Simulator.request`` alone).

Run by hand, in whichever checkout is on ``PYTHONPATH`` (so two checkouts compare
side by side)::

    .venv/bin/python benchmarks/bench_cache_sim.py                 # generated, 5,000 steps
    .venv/bin/python benchmarks/bench_cache_sim.py SESSION --provider openai --model gpt-4o

Every step is assembled once, up front; then only the simulator's requests are
timed, on a fresh store, in CPU time (the machine may be shared), best of
``--repeat`` runs:

- total: as ``analyze`` runs them, with every distinct line already tokenized by
  a warm-up pass, but the splitting of each block a step changed included;
- own: the same, with each block's measurements answered from a table a previous
  pass filled, which leaves the simulator's own work. Within ``analyze`` the
  splitting is shared with the block records, so this is the simulation's part.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import datetime
from pathlib import Path

from assembler.analysis.engine import SessionAssembler
from assembler.cache.anthropic import AnthropicSimulator
from assembler.cache.providers import simulator
from assembler.cache.segmenter import Segmenter
from assembler.cache.store import CacheStore
from assembler.cache.tokenizers import counter, encoding
from assembler.design.piece_text import Content
from assembler.design.wire import WireBlock
from assembler.sessions.generator import generate_session, write_session
from assembler.sessions.loader import load_session
from assembler.sessions.model import RequestSettings

ENCODING = "o200k_base"
Step = tuple[tuple[WireBlock, ...], str, datetime, RequestSettings | None, str | None]


class Answered(Segmenter):
    """A segmenter that answers each block from a table, once ``inner`` has measured it."""

    def __init__(self, inner: Segmenter) -> None:
        super().__init__(inner.counter)
        self.inner = inner
        self.measured: dict[int, tuple[int, int]] = {}
        self.segmented: dict[int, tuple[list[int], list[int], int]] = {}
        self.kept: dict[tuple[int, int], int] = {}

    def measure(self, block: WireBlock) -> tuple[int, int]:
        got = self.measured.get(id(block))
        if got is None:
            got = self.measured[id(block)] = self.inner.measure(block)
        return got

    def segments(self, block: WireBlock) -> tuple[list[int], list[int], int]:
        got = self.segmented.get(id(block))
        if got is None:
            counts, prints, total = self.inner.segments(block)
            got = self.segmented[id(block)] = (list(counts), list(prints), total)
        return got

    def kept_lines(self, block: WireBlock, before: Content) -> int:
        got = self.kept.get((id(block), id(before)))
        if got is None:
            got = self.kept[(id(block), id(before))] = self.inner.kept_lines(block, before)
        return got


def assembled(path: Path, model: str | None) -> tuple[str, list[Step]]:
    """The session's provider, and every step's request."""
    session = load_session(path)
    return session.profile.provider, [
        (
            a.wire.blocks,
            model or a.step.context.profile.model,
            a.step.at,
            a.step.call.settings,
            a.step.call.ttl,
        )
        for a in SessionAssembler(session)
    ]


def run(provider: str, segmenter: Segmenter, steps: list[Step]) -> float:
    """CPU seconds of every step's request on a fresh simulator and store."""
    sim = simulator(provider, segmenter)
    store = CacheStore()
    start = time.process_time()
    for blocks, model, at, settings, ttl in steps:
        if ttl and isinstance(sim, AnthropicSimulator):  # a recorded bill's write lifetime
            sim.request(blocks, model, at, store, settings, ttl=ttl)
        else:
            sim.request(blocks, model, at, store, settings)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session", nargs="?", type=Path, help="default: a generated one")
    parser.add_argument("--steps", type=int, default=5000, help="of the generated session")
    parser.add_argument("--provider", help="default: the session's")
    parser.add_argument("--model", help="default: each step's")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    encoding(ENCODING)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.session
        if path is None:
            path = Path(tmp) / f"generated-{args.steps}-0.jsonl"
            write_session(generate_session(args.steps), path)
        recorded, steps = assembled(path, args.model)
    provider = args.provider or recorded
    segmenter = Segmenter(counter(ENCODING))
    run(provider, segmenter, steps)  # every distinct line tokenized
    answered = Answered(segmenter)
    run(provider, answered, steps)  # the table filled
    total = min(run(provider, segmenter, steps) for _ in range(args.repeat))
    own = min(run(provider, answered, steps) for _ in range(args.repeat))
    n = len(steps)
    print(
        f"{provider}, {n:,} steps: request {total / n * 1e6:.1f} us per step, "
        f"of which the simulation's own {own / n * 1e6:.1f} us (best of {args.repeat})"
    )


if __name__ == "__main__":
    main()
