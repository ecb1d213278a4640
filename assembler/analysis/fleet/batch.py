"""``analyze`` over many sessions: a folder or a glob, in parallel on every core.

Each session is analysed in a worker process (``ProcessPoolExecutor``,
``os.cpu_count()`` workers by default), which sends back only a
:class:`SessionSummary` of a few numbers, never the ``SessionAnalysis``. A worker
holds one session at a time, so the memory of each process is
bounded by the largest single session (plus a token memo capped at
``MEMO_LIMIT`` distinct lines), whatever the number of sessions. A file
that fails to load or to analyse becomes one :class:`Failure` line; the batch
goes on.
"""

from __future__ import annotations

import glob
import math
import os
import resource
import signal
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assembler.limits import one_line

if TYPE_CHECKING:
    from assembler.analysis.engine import SessionAnalysis
    from assembler.sessions.model import Session

SESSION_SUFFIXES = (".yaml", ".yml", ".jsonl", ".json")
GLOB_CHARS = frozenset("*?[")
MEMO_LIMIT = 50_000  # distinct lines kept in a worker's token memo between sessions (a few MB)
HISTOGRAM_BINS = 10
HISTOGRAM_WIDTH = 40


@dataclass(frozen=True)
class SessionSummary:
    """What a worker sends back for one session: a few numbers, no steps."""

    path: str
    session: str
    steps: int
    tokens: int
    read: int
    write: int
    uncached: int
    usd: float
    usd_without_cache: float
    breakers: tuple[tuple[str, int, int], ...]  # (component, misses, tokens lost)
    measured_steps: int
    measured_disagree: int
    seconds: float
    pid: int
    peak_rss_mb: float  # the worker process's peak resident memory so far

    @property
    def hit_ratio(self) -> float:
        return self.read / self.tokens if self.tokens else 0.0


@dataclass(frozen=True)
class Failure:
    path: str
    message: str  # one line


#: The per-file budget: a 50 MB session analyses in well under a minute (benchmarks/);
#: a file that takes this long is hostile or pathological, not just large.
FILE_SECONDS = 120.0


class FileBudgetExceeded(Exception):
    """Raised inside a worker when one file has used its time budget."""


def _over_budget(signum: int, frame: object) -> None:
    raise FileBudgetExceeded


@dataclass(frozen=True)
class Options:
    """The ``analyze`` options every session of the batch gets."""

    layout: str = "seed"
    provider: str | None = None
    model: str | None = None
    ttl: str | None = None
    #: Wall-clock seconds one file may take; past it the file is reported under failed.
    file_seconds: float = FILE_SECONDS


Task = Callable[[str, Options], "SessionSummary | Failure"]


@dataclass(frozen=True)
class BatchReport:
    sessions: tuple[SessionSummary, ...]
    failures: tuple[Failure, ...]
    workers: int
    seconds: float
    pids: frozenset[int] = field(default_factory=frozenset)

    @property
    def steps(self) -> int:
        return sum(s.steps for s in self.sessions)

    @property
    def peak_worker_rss_mb(self) -> float:
        return max((s.peak_rss_mb for s in self.sessions), default=0.0)

    def totals(self) -> dict[str, float]:
        tokens = sum(s.tokens for s in self.sessions)
        read = sum(s.read for s in self.sessions)
        usd = sum(s.usd for s in self.sessions)
        without = sum(s.usd_without_cache for s in self.sessions)
        return {
            "sessions": len(self.sessions),
            "failed": len(self.failures),
            "steps": self.steps,
            "tokens": tokens,
            "read": read,
            "write": sum(s.write for s in self.sessions),
            "uncached": sum(s.uncached for s in self.sessions),
            "hit_ratio": read / tokens if tokens else 0.0,
            "usd": usd,
            "usd_without_cache": without,
            "saving_percent": (without - usd) / without * 100 if without else 0.0,
        }

    def breakers(self) -> list[tuple[str, int, int]]:
        """(component, misses, tokens lost) over all sessions, most misses first."""
        misses: Counter[str] = Counter()
        lost: Counter[str] = Counter()
        for s in self.sessions:
            for name, n, t in s.breakers:
                misses[name] += n
                lost[name] += t
        return sorted(((c, misses[c], lost[c]) for c in misses), key=lambda x: (-x[1], -x[2], x[0]))


# --- which files ---------------------------------------------------------------------------


def is_batch_target(target: str) -> bool:
    """A folder or a glob pattern (as opposed to one session file); an existing file
    named like a pattern (``sess[1].yaml``) is that file."""
    if os.path.lexists(target) and not Path(target).is_dir():
        return False
    return bool(GLOB_CHARS & set(target)) or Path(target).is_dir()


def session_paths(target: str) -> list[Path]:
    """The session files of a folder (``*.yaml``, ``*.yml``, ``*.jsonl``, ``*.json``, not
    recursive) or of a glob (``**`` recurses), sorted. Raises ``ValueError`` when none."""
    if Path(target).is_dir():
        paths = [p for p in Path(target).iterdir() if p.suffix in SESSION_SUFFIXES]
    else:
        paths = [Path(p) for p in glob.glob(target, recursive=True)]
    files = sorted(p for p in paths if p.is_file())
    if not files:
        what = "folder" if Path(target).is_dir() else "pattern"
        raise ValueError(f"{target}: no session file in this {what}")
    return files


# --- one session, in a worker ---------------------------------------------------------------


def _one_line(exc: BaseException) -> str:
    return one_line(str(exc), 600) or type(exc).__name__


@contextmanager
def file_budget(seconds: float) -> Iterator[None]:
    """Raise :class:`FileBudgetExceeded` in the block after ``seconds``.

    A timer signal interrupts the file's work; signals reach a process's main thread
    only (a pool worker or a Ray task runs there; another runner's thread goes without).
    """
    timed = threading.current_thread() is threading.main_thread()
    if timed:
        previous = signal.signal(signal.SIGALRM, _over_budget)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def analyze_under(session: Session, options: Options) -> SessionAnalysis:
    """``session`` analysed under the batch's layout, provider, model and lifetime."""
    from assembler.analysis.engine import analyze, load_layout

    return analyze(
        session,
        load_layout(options.layout),
        provider=options.provider,
        model=options.model,
        ttl=options.ttl,
    )


def failure(path: str, exc: BaseException, options: Options) -> Failure:
    """A bad file's one line; the token memos it filled are dropped with it."""
    from assembler.cache import tokenizers as tokens

    tokens.counter.cache_clear()
    if isinstance(exc, FileBudgetExceeded):
        return Failure(path, f"stopped after the per-file budget of {options.file_seconds:g} s")
    return Failure(path, _one_line(exc))


def summarise(path: str, options: Options) -> SessionSummary | Failure:
    """Load and analyse one session; the worker's job. Never raises for a bad file."""
    from assembler.sessions.loader import load_session

    start = time.perf_counter()
    try:
        with file_budget(options.file_seconds):
            a = analyze_under(load_session(path), options)
    except Exception as exc:  # one bad file must not stop the batch
        return failure(path, exc, options)
    return summary_of(path, a, start)


def summary_of(path: str, a: SessionAnalysis, start: float) -> SessionSummary:
    """The few numbers of one analysed session (``start``: when its work began)."""
    from assembler.analysis.bill import compare_measured
    from assembler.cache import tokenizers as tokens

    # The token memo is shared across sessions (their common lines are counted
    # once) but would grow with every session: drop it past a fixed size.
    used = {tokens.tokenizer_for(s.provider, s.model).encoding for s in a.steps}
    if sum(len(tokens.counter(e)) for e in used) > MEMO_LIMIT:
        tokens.counter.cache_clear()
    misses: Counter[str] = Counter()
    lost: Counter[str] = Counter()
    for s in a.steps:
        if s.miss is not None:
            misses[s.miss.component] += 1
            lost[s.miss.component] += s.miss.tokens_lost
    measured = compare_measured(a) if any(s.measured is not None for s in a.steps) else []
    t = a.totals
    return SessionSummary(
        path=path,
        session=a.session,
        steps=len(a.steps),
        tokens=int(t["tokens"]),
        read=int(t["read"]),
        write=int(t["write"]),
        uncached=int(t["uncached"]),
        usd=t["usd"],
        usd_without_cache=t["usd_without_cache"],
        breakers=tuple((c, misses[c], lost[c]) for c in sorted(misses)),
        measured_steps=len(measured),
        measured_disagree=sum(not c.agree for c in measured),
        seconds=time.perf_counter() - start,
        pid=os.getpid(),
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )


# --- the batch ----------------------------------------------------------------------------


def analyze_batch(
    paths: Iterable[Path | str],
    options: Options | None = None,
    *,
    workers: int | None = None,
    task: Task | None = None,
) -> BatchReport:
    """Analyse every session in ``paths`` on ``workers`` processes (default: all cores).

    ``task`` replaces :func:`summarise` as each worker's job (a picklable callable with
    the same signature; the fleet outputs use it to write Parquet and spans)."""
    options = options or Options()
    names = [str(p) for p in paths]
    n = workers or os.cpu_count() or 1
    if n < 1:
        raise ValueError("workers must be at least 1")
    start = time.perf_counter()
    results: list[SessionSummary | Failure] = []
    with ProcessPoolExecutor(max_workers=n) as pool:
        futures: list[Future[SessionSummary | Failure]] = [
            pool.submit(task or summarise, p, options) for p in names
        ]
        for path, fut in zip(names, futures, strict=True):
            try:
                results.append(fut.result())
            except Exception as exc:  # the worker itself died (killed, out of memory)
                results.append(Failure(path, f"worker failed: {_one_line(exc)}"))
    seconds = time.perf_counter() - start
    ok = tuple(r for r in results if isinstance(r, SessionSummary))
    return BatchReport(
        sessions=ok,
        failures=tuple(r for r in results if isinstance(r, Failure)),
        workers=n,
        seconds=seconds,
        pids=frozenset(s.pid for s in ok),
    )


# --- the report -----------------------------------------------------------------------------


def distribution(values: Sequence[float]) -> dict[str, float]:
    """min, p10, median, p90, max (linear interpolation between the closest ranks)."""
    if not values:
        return {"min": 0.0, "p10": 0.0, "median": 0.0, "p90": 0.0, "max": 0.0}
    xs = sorted(values)
    if len(xs) == 1:
        x = xs[0]
        return {"min": x, "p10": x, "median": x, "p90": x, "max": x}
    deciles = statistics.quantiles(xs, n=10, method="inclusive")
    return {
        "min": xs[0],
        "p10": deciles[0],
        "median": statistics.median(xs),
        "p90": deciles[8],
        "max": xs[-1],
    }


def histogram(values: Sequence[float], bins: int = HISTOGRAM_BINS) -> list[tuple[str, int]]:
    """Counts of hit ratios in ``bins`` equal ranges of [0, 1] (the last one closed)."""
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, math.floor(v * bins)))] += 1
    step = 100 // bins
    return [(f"{i * step:>3}–{(i + 1) * step}%", c) for i, c in enumerate(counts)]


def batch_json(r: BatchReport) -> dict[str, Any]:
    ratios = [s.hit_ratio for s in r.sessions]
    t = r.totals()
    return {
        "sessions": int(t["sessions"]),
        "failed": int(t["failed"]),
        "steps": int(t["steps"]),
        "workers": r.workers,
        "worker_processes_used": len(r.pids),
        "seconds": round(r.seconds, 3),
        "peak_worker_rss_mb": round(r.peak_worker_rss_mb, 1),
        "totals": {
            "tokens": int(t["tokens"]),
            "read": int(t["read"]),
            "write": int(t["write"]),
            "uncached": int(t["uncached"]),
            "hit_ratio": round(t["hit_ratio"], 6),
        },
        "cost": {
            "usd": round(t["usd"], 8),
            "usd_without_cache": round(t["usd_without_cache"], 8),
            "saving_percent": round(t["saving_percent"], 4),
        },
        "hit_ratio": {k: round(v, 6) for k, v in distribution(ratios).items()},
        "histogram": [{"range": label.strip(), "sessions": n} for label, n in histogram(ratios)],
        "breakers": [
            {"component": c, "misses": n, "tokens_lost": lost} for c, n, lost in r.breakers()
        ],
        "measured": {
            "steps": sum(s.measured_steps for s in r.sessions),
            "disagree": sum(s.measured_disagree for s in r.sessions),
        },
        "per_session": [
            {
                "path": s.path,
                "session": s.session,
                "steps": s.steps,
                "tokens": s.tokens,
                "hit_ratio": round(s.hit_ratio, 6),
                "usd": round(s.usd, 8),
                "usd_without_cache": round(s.usd_without_cache, 8),
            }
            for s in r.sessions
        ],
        "failures": [{"path": f.path, "error": f.message} for f in r.failures],
    }


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def human_batch(r: BatchReport, top: int = 10) -> str:
    ratios = [s.hit_ratio for s in r.sessions]
    t = r.totals()
    d = distribution(ratios)
    rate = r.steps / r.seconds if r.seconds else 0.0
    lines = [
        f"{int(t['sessions'])} session{_s(int(t['sessions']))} analysed,"
        f" {int(t['failed'])} failed · {int(t['steps']):,} step{_s(int(t['steps']))}"
        f" · {r.workers} worker{_s(r.workers)} · {r.seconds:.1f} s ({rate:,.0f} steps/s)",
        "",
        f"tokens {int(t['tokens']):,} · read {int(t['read']):,} · write {int(t['write']):,}"
        f" · uncached {int(t['uncached']):,} · hit ratio {t['hit_ratio']:.1%}",
        f"cost: ${t['usd']:.4f} with caching, ${t['usd_without_cache']:.4f} without"
        f" (saving {t['saving_percent']:.1f} %)",
        "",
        "hit ratio per session: " + " · ".join(f"{k} {v:.1%}" for k, v in d.items()),
    ]
    hist = histogram(ratios)
    peak = max((n for _, n in hist), default=0)
    for label, n in hist:
        bar = "#" * (math.ceil(n / peak * HISTOGRAM_WIDTH) if peak and n else 0)
        lines.append(f"  {label:>9} {n:>5} {bar}".rstrip())
    breakers = r.breakers()
    if breakers:
        lines += ["", "components that break the prefix most often:"]
        width = max(len(c) for c, _, _ in breakers[:top])
        lines += [
            f"  {c:<{width}}  {n:>6,} {'miss' if n == 1 else 'misses':<6}  {lost:>12,} tokens lost"
            for c, n, lost in breakers[:top]
        ]
    measured = sum(s.measured_steps for s in r.sessions)
    if measured:
        disagree = sum(s.measured_disagree for s in r.sessions)
        lines += [
            "",
            f"measured usage: {measured:,} steps, {disagree:,} disagree with the simulator",
        ]
    if r.failures:
        lines += ["", f"failed to load ({len(r.failures)}):"]
        lines += [f"  {f.path}: {f.message}" for f in r.failures]
    return "\n".join(lines)
