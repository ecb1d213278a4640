"""One timed ``analyze`` of a generated session, in whichever checkout is on ``PYTHONPATH``.

Used to compare two checkouts side by side across the package restructure (it
finds the engine under either layout), e.g.

    for tree in OLD NEW OLD NEW; do
        (cd $tree && PYTHONPATH=$tree python benchmarks/bench_restructure.py 5000)
    done

It prints the seconds of one analyze (encodings and prices warmed first) and
the totals, so two checkouts that should agree show the same tokens and cost.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from importlib import import_module
from typing import Any

# (analyze, generate_session, parse_session) in the layered package, then in the flat one
LAYOUTS = (
    (
        "assembler.analysis.engine",
        "assembler.sessions.generator",
        "assembler.sessions.loader",
    ),
    ("assembler.analysis", "assembler.generator", "assembler.session"),
)


def engine() -> tuple[Any, Any, Any]:
    for analysis, generator, loader in LAYOUTS:
        try:
            return (
                import_module(analysis).analyze,
                import_module(generator).generate_session,
                import_module(loader).parse_session,
            )
        except (ImportError, AttributeError):
            continue
    raise SystemExit("no assembler package on the path")


def main(steps: int) -> None:
    analyze, generate_session, parse_session = engine()
    session = parse_session(json.dumps(generate_session(steps, 0)), "<generated>")
    analyze(parse_session(json.dumps(generate_session(5, 1)), "<warm-up>"))
    gc.collect()
    start = time.perf_counter()
    totals = analyze(session).totals
    seconds = time.perf_counter() - start
    out = {"steps": steps, "s": round(seconds, 3), "tokens": totals["tokens"]}
    print(json.dumps({**out, "usd": round(totals["usd"], 6)}))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
