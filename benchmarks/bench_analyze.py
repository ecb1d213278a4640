"""Benchmark: ``analyze`` against the input floor and a naive tokenizer, and the CLI.

Run by hand (a quick run, then the full one)::

    .venv/bin/python benchmarks/bench_analyze.py --steps 500 5000 --cli-steps 5000
    .venv/bin/python benchmarks/bench_analyze.py     # 500, 5,000, 20,000, 50,000; CLI at 5,000

On generated sessions (``assembler.sessions.generator``, written as JSON Lines, Anthropic
claude-sonnet-4-5, ``seed`` layout). Every path runs in a fresh interpreter, so no
memo or cache outlives it and its peak RSS is its own:

- floor: read the session file and tokenize every distinct string in it once
  (o200k). Any analysis must at least tokenize its input, so this is a true
  lower bound on the tokenizing work.
- analyze: ``assembler.analysis.analyze`` on the parsed session (replay,
  assemble, tokens, cache simulation, misses, cost).
- naive: per step, assemble and tokenize the whole request (``wire.text()``
  plus the tools JSON) with an empty memo, as a per-request trace tool does.
  Above ``--naive-full`` steps only every k-th request is tokenized and that
  time is multiplied by k (assembling still runs for every step); the table
  marks such rows "sampled".
- cli: ``python -m assembler analyze FILE --json`` to /dev/null, wall-clock and
  peak RSS; its fixed start-up is the same command on a one-step session, and
  "after start-up" is the difference.

``--base DIR`` also runs analyze and the CLI from the package in ``DIR`` (another
checkout), right after this one's at each size, and prints its times beside.

Reading the file is outside the analyze and naive times (inside the floor's and
the CLI's); the encoding and the price tables are loaded before any timing.
Peak memory is the child's peak RSS; "above load" subtracts the RSS once the
session is parsed. The exponents are least-squares fits against log(steps) over
the sizes run: of log(memory above load), and of log(peak RSS above that of a
one-step session), which counts the parsed session too.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ENCODING = "o200k_base"
ROOT = Path(__file__).resolve().parent.parent


def rss_mb() -> float:
    """Peak RSS of this process's own address space so far, in MB: VmHWM. Not
    ru_maxrss, which Linux keeps across exec (a child forked from a large parent
    would report the parent's size)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _strings(value: Any, out: set[str]) -> None:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, dict):
            out.update(k for k in v if isinstance(k, str))
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def child(path_name: str, file: str, sample: int) -> dict[str, float]:
    """One measured path in this (fresh) interpreter."""
    from assembler.cache.tokenizers import TokenCounter, encoding

    enc = encoding(ENCODING)  # loaded before any timing
    encode = enc.encode_ordinary
    if path_name == "floor":
        base = rss_mb()
        start = time.perf_counter()
        distinct: set[str] = set()
        with open(file, encoding="utf-8") as f:
            for line in f:
                _strings(json.loads(line), distinct)
        tokens = sum(len(encode(s)) for s in distinct)
        return {"seconds": time.perf_counter() - start, "peak": rss_mb(), "base": base, "n": tokens}
    from assembler.sessions.loader import load_session

    session = load_session(file)
    base = rss_mb()
    if path_name == "analyze":
        from assembler.analysis.engine import analyze
        from assembler.cache.prices.pricing import check_model

        # the price tables load on first use; like the encoding, before any timing
        check_model(session.profile.provider, session.profile.model)
        start = time.perf_counter()
        a = analyze(session)
        seconds = time.perf_counter() - start
        return {"seconds": seconds, "peak": rss_mb(), "base": base, "n": a.totals["tokens"]}
    from assembler.analysis.engine import SessionAssembler

    total, tokenizing = 0, 0.0
    start = time.perf_counter()
    for i, step in enumerate(SessionAssembler(session)):
        if i % sample:
            continue
        t0 = time.perf_counter()
        wire = step.wire
        tools_json = "".join(b.text for b in wire.section("tools"))
        fresh = TokenCounter(ENCODING)  # a new, empty memo for every request
        total += fresh.count(tools_json + "\n\n" + wire.text())
        tokenizing += time.perf_counter() - t0
    seconds = time.perf_counter() - start + tokenizing * (sample - 1)
    return {"seconds": seconds, "peak": rss_mb(), "base": base, "n": total * sample}


def run_child(path_name: str, file: Path, sample: int = 1, root: Path = ROOT) -> dict[str, float]:
    """One path in a fresh interpreter, importing the package from ``root``."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", path_name, str(file), "--sample", str(sample)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def run_cli(file: Path, root: Path = ROOT) -> tuple[float, float]:
    """Wall-clock and peak RSS (MB) of ``analyze FILE --json`` in its own process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "assembler", "analyze", str(file.resolve()), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(root)},
        cwd=root,  # ``-m`` puts the working directory first on the path
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"cli failed on {file}: {err.strip()}")
    return seconds, usage.ru_maxrss / 1024


def session_file(directory: Path, steps: int, seed: int) -> Path:
    path = directory / f"generated-{steps}-{seed}.jsonl"
    if not path.exists():
        # in a child: a large session held here would inflate the CLI children's peak
        # RSS, which wait4 reports as Linux keeps it across fork and exec
        code = "import sys; from pathlib import Path; from assembler.sessions.generator import "
        code += "generate_session, write_session; "
        code += f"write_session(generate_session({steps}, {seed}), Path(sys.argv[1]))"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-c", code, str(path)], check=True, env=env)
    return path


def fit_exponent(points: list[tuple[int, float]]) -> float | None:
    """Slope of log(y) against log(x), least squares; None with fewer than two points."""
    pts = [(math.log(x), math.log(y)) for x, y in points if y > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


def best(runs: list[dict[str, float]]) -> dict[str, float]:
    return min(runs, key=lambda r: r["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--steps", type=int, nargs="*", default=[500, 5000, 20000, 50000])
    parser.add_argument("--cli-steps", type=int, nargs="*", default=[5000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1, help="best of N for analyze and floor")
    parser.add_argument(
        "--naive-full", type=int, default=5000, help="above this many steps naive is sampled"
    )
    parser.add_argument("--no-naive", action="store_true", help="leave the naive path out")
    parser.add_argument("--dir", type=Path, help="keep generated sessions here (default: temp)")
    parser.add_argument(
        "--base",
        type=Path,
        help="another checkout of the package: its analyze and CLI run beside this one's",
    )
    parser.add_argument("--child", nargs=2, metavar=("PATH", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--sample", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.sample)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.dir or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        report(args, directory)


def report(args: argparse.Namespace, directory: Path) -> None:
    print(
        f"{'steps':>7}  {'floor s':>8}  {'analyze s':>9}  {'a/floor':>7}  {'naive s':>8}  "
        f"{'naive/a':>8}  {'peak MB':>8}  {'above load':>10}"
    )
    memory: list[tuple[int, float]] = []
    peaks: list[tuple[int, float]] = []
    floors: dict[int, float] = {}
    for steps in args.steps:
        file = session_file(directory, steps, args.seed)
        floor = best([run_child("floor", file) for _ in range(args.repeat)])
        a = best([run_child("analyze", file) for _ in range(args.repeat)])
        floors[steps] = floor["seconds"]
        if args.base:
            b = best([run_child("analyze", file, root=args.base) for _ in range(args.repeat)])
            print(
                f"{steps:>7,}  base: analyze {b['seconds']:.2f} s, {b['seconds'] / floor['seconds']:.2f}x"
                f" the floor, peak {b['peak']:.0f} MB; this checkout {a['seconds'] / b['seconds']:.2f}x"
                " the base's time"
            )
        naive_text = ""
        if not args.no_naive:
            k = max(1, math.ceil(steps / args.naive_full))
            n = run_child("naive", file, k)
            mark = " sampled" if k > 1 else ""
            naive_text = f"{n['seconds']:>8.1f}  {n['seconds'] / a['seconds']:>7.1f}x{mark}"
        above = a["peak"] - a["base"]
        memory.append((steps, above))
        peaks.append((steps, a["peak"]))
        print(
            f"{steps:>7,}  {floor['seconds']:>8.2f}  {a['seconds']:>9.2f}  "
            f"{a['seconds'] / floor['seconds']:>6.2f}x  {naive_text or '-':>17}  "
            f"{a['peak']:>8.0f}  {above:>10.0f}",
            flush=True,
        )
    exponent = fit_exponent(memory)
    if exponent is not None:
        print(
            f"analyze memory above load ~ steps^{exponent:.2f} (least squares over {len(memory)} sizes)"
        )
        base = run_child("analyze", session_file(directory, 1, args.seed))["peak"]
        total = fit_exponent([(n, p - base) for n, p in peaks])
        if total is not None:
            print(f"peak RSS above a one-step session's ({base:.0f} MB) ~ steps^{total:.2f}")
    if not args.cli_steps:
        return
    one = session_file(directory, 1, args.seed)
    startups = [run_cli(one) for _ in range(3)]
    startup = min(s for s, _ in startups)
    print(
        f"\ncli start-up (one-step session, best of 3): {startup:.2f} s, peak {startups[0][1]:.0f} MB"
    )
    base_startup = min(run_cli(one, args.base)[0] for _ in range(3)) if args.base else 0.0
    print(
        f"{'steps':>7}  {'cli s':>7}  {'after start-up':>14}  {'floor s':>8}  {'ratio':>6}  {'peak MB':>8}"
    )
    cli_memory: list[tuple[int, float]] = []
    for steps in args.cli_steps:
        file = session_file(directory, steps, args.seed)
        floor_s = (
            floors.get(steps)
            or best([run_child("floor", file) for _ in range(args.repeat)])["seconds"]
        )
        seconds, peak = run_cli(file)
        cli_memory.append((steps, peak))
        after = seconds - startup
        print(
            f"{steps:>7,}  {seconds:>7.2f}  {after:>14.2f}  {floor_s:>8.2f}  "
            f"{after / floor_s:>5.2f}x  {peak:>8.0f}",
            flush=True,
        )
        if args.base:
            base_s, base_peak = run_cli(file, args.base)
            print(
                f"{'base':>7}  {base_s:>7.2f}  {base_s - base_startup:>14.2f}  {floor_s:>8.2f}  "
                f"{(base_s - base_startup) / floor_s:>5.2f}x  {base_peak:>8.0f}"
                f"   (its start-up {base_startup:.2f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
