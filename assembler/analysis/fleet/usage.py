"""Your own traffic as a bill: per project and per day, what was billed, what the simulation
makes of it, what it would cost without caching, and where the cache lost money.

Each session (a Claude Code transcript, a Codex rollout, any input the app part opens) is
analysed on its own, in a worker process, and sent back as a few numbers per day; a folder
is read one session at a time, so memory does not grow with the number of sessions.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from assembler.analysis.fleet.batch import (
    Failure,
    Options,
    analyze_under,
    failure,
    file_budget,
    trim_token_memo,
)

if TYPE_CHECKING:
    from assembler.analysis.engine import SessionAnalysis, StepAnalysis
    from assembler.sessions.model import Session

MAIN_THREAD = "main"


def default_places(env: Mapping[str, str], home: Path) -> list[Path]:
    """Where Claude Code and Codex keep their sessions, the existing ones, each once."""
    places = [home / ".claude" / "projects"]
    if env.get("CLAUDE_CONFIG_DIR"):
        places.append(Path(env["CLAUDE_CONFIG_DIR"]) / "projects")
    places.append(home / ".codex" / "sessions")
    if env.get("CODEX_HOME"):
        places.append(Path(env["CODEX_HOME"]) / "sessions")
    seen: list[Path] = []
    for p in places:
        if p.is_dir() and p.resolve() not in {s.resolve() for s in seen}:
            seen.append(p)
    return seen


@dataclass
class Bucket:
    """One project's one day (or any sum of them)."""

    requests: int = 0
    billed: float = 0.0
    billed_requests: int = 0  # requests whose usage the provider reported
    simulated: float = 0.0
    without_cache: float = 0.0
    input_tokens: int = 0  # as billed where reported, else as simulated
    read_tokens: int = 0
    unread_writes: int = 0  # tokens written to the cache that no later call read
    causes: dict[str, tuple[int, float]] = field(default_factory=dict)  # cause → (misses, $)

    @property
    def hit_ratio(self) -> float:
        return self.read_tokens / self.input_tokens if self.input_tokens else 0.0

    def add(self, other: Bucket) -> None:
        self.requests += other.requests
        self.billed += other.billed
        self.billed_requests += other.billed_requests
        self.simulated += other.simulated
        self.without_cache += other.without_cache
        self.input_tokens += other.input_tokens
        self.read_tokens += other.read_tokens
        self.unread_writes += other.unread_writes
        for cause, (n, usd) in other.causes.items():
            had = self.causes.get(cause, (0, 0.0))
            self.causes[cause] = (had[0] + n, had[1] + usd)

    def top_causes(self, n: int = 3) -> list[tuple[str, int, float]]:
        ranked = sorted(self.causes.items(), key=lambda kv: (-kv[1][1], kv[0]))
        return [(c, k, usd) for c, (k, usd) in ranked[:n]]


@dataclass(frozen=True)
class SessionUsage:
    """What a worker sends back for one session."""

    name: str
    session: str
    project: str
    days: dict[date, Bucket]


def project_of(name: str, session: Session) -> str:
    """The working folder the agent ran in, else the folder the file sits in."""
    cwd = session.profile.environment.cwd
    if cwd and cwd != "/":
        return cwd
    return Path(name.split(".zip:")[0]).parent.name or "."


def _thread(step: StepAnalysis) -> str:
    """Which prompt a step extends: a subagent's own, or the main one."""
    return next((p for p in step.call_path if p.startswith("subagent:")), MAIN_THREAD)


def _read_write(step: StepAnalysis) -> tuple[int, int, int]:
    """(input, read, written) tokens: as billed when the provider reported usage."""
    u = step.measured
    if u is not None:
        return u.input + u.cache_read + u.cache_write, u.cache_read, u.cache_write
    return step.tokens.get("total", step.read + step.write + step.uncached), step.read, step.write


def unread_writes(steps: Iterable[StepAnalysis]) -> list[int]:
    """Per step, the tokens it wrote to the cache that no later call of its thread read
    before that part of the prompt was written again (a prefix cache: a later call reads
    a write when it reads past where the write began)."""
    steps = list(steps)
    threads: dict[str, list[int]] = {}
    for i, s in enumerate(steps):
        threads.setdefault(_thread(s), []).append(i)
    counts = [_read_write(s) for s in steps]
    out = [0] * len(steps)
    for order in threads.values():
        for k, i in enumerate(order):
            _, read, wrote = counts[i]
            if wrote <= 0:
                continue
            used = 0
            for j in order[k + 1 :]:
                _, later_read, later_wrote = counts[j]
                used = max(used, min(wrote, later_read - read))
                if used >= wrote or (later_wrote > 0 and later_read < read + wrote):
                    break  # all of it read, or that part written again
            out[i] = wrote - max(used, 0)
    return out


_INDEX = re.compile(r"\[\d+\]")


def cause_of(step: StepAnalysis) -> str:
    """A miss's cause, named so that misses of the same kind add up."""
    assert step.miss is not None
    return step.miss.reason or _INDEX.sub("[…]", step.miss.component)


def lost_usd(step: StepAnalysis) -> float:
    """What the miss cost: its lost prefix written again instead of read."""
    from assembler.cache.prices.pricing import price

    assert step.miss is not None
    lost = step.miss.tokens_lost
    if lost <= 0:
        return 0.0
    provider, at, context = step.platform or step.provider, step.timestamp, step.price_context
    hour = step.write_ttl == "1h"
    again = price(
        provider,
        step.model,
        total_input=lost,
        cache_write=lost,
        write_1h=hour,
        at=at,
        context=context,
    )
    read = price(provider, step.model, total_input=lost, cache_read=lost, at=at, context=context)
    return max(0.0, again - read)


def session_usage(name: str, session: Session, a: SessionAnalysis) -> SessionUsage:
    from assembler.analysis.bill import billed_cost

    days: dict[date, Bucket] = {}
    for s, unread in zip(a.steps, unread_writes(a.steps), strict=True):
        b = days.setdefault(s.timestamp.date(), Bucket())
        b.requests += 1
        billed = billed_cost(s)
        if billed is not None:
            b.billed += billed
            b.billed_requests += 1
        b.simulated += s.usd
        b.without_cache += s.usd_without_cache
        total, read, _ = _read_write(s)
        b.input_tokens += total
        b.read_tokens += read
        b.unread_writes += unread
        if s.miss is not None:
            cause = cause_of(s)
            n, usd = b.causes.get(cause, (0, 0.0))
            b.causes[cause] = (n + 1, usd + lost_usd(s))
    return SessionUsage(name, a.session, project_of(name, session), days)


def usage_task(name: str, options: Options) -> SessionUsage | Failure:
    """The worker's job for one session: open, analyse, sum per day. Never raises."""
    from assembler.analysis.app import open_session

    try:
        with file_budget(options.file_seconds):
            session = open_session(name).session
            a = analyze_under(session, options)
            got = session_usage(name, session, a)
    except Exception as exc:  # one bad file must not stop the others
        return failure(name, exc, options)
    trim_token_memo(a)
    return got


def run_usage(
    names: list[str],
    options: Options,
    *,
    workers: int | None = None,
    done: Callable[[], None] | None = None,
) -> Iterator[SessionUsage | Failure]:
    """Each session's usage as it completes, on ``workers`` processes (default: every core;
    one runs here); ``done`` is called after each, for a progress bar."""
    n = min(workers or os.cpu_count() or 1, max(1, len(names)))
    if n == 1:
        for name in names:
            yield usage_task(name, options)
            if done:
                done()
        return
    with ProcessPoolExecutor(max_workers=n) as pool:
        futures: dict[Future[SessionUsage | Failure], str] = {
            pool.submit(usage_task, name, options): name for name in names
        }
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as exc:  # the worker itself died
                yield Failure(futures[fut], f"worker failed: {exc}")
            if done:
                done()


@dataclass
class UsageReport:
    rows: dict[tuple[str, date], Bucket] = field(default_factory=dict)
    sessions: int = 0
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, got: SessionUsage | Failure, keep: Callable[[str, date], bool]) -> None:
        if isinstance(got, Failure):
            self.failures.append(got)
            return
        kept = False
        for day, bucket in got.days.items():
            if keep(got.project, day):
                self.rows.setdefault((got.project, day), Bucket()).add(bucket)
                kept = True
        self.sessions += kept

    def projects(self) -> dict[str, Bucket]:
        out: dict[str, Bucket] = {}
        for (project, _), bucket in sorted(self.rows.items()):
            out.setdefault(project, Bucket()).add(bucket)
        return out

    def total(self) -> Bucket:
        out = Bucket()
        for bucket in self.rows.values():
            out.add(bucket)
        return out


def collect(
    results: Iterable[SessionUsage | Failure], keep: Callable[[str, date], bool]
) -> UsageReport:
    start = time.perf_counter()
    report = UsageReport()
    for got in results:
        report.add(got, keep)
    report.seconds = time.perf_counter() - start
    return report
