"""``python -m assembler usage [PATH ...]``: the bill of your own traffic, per project and day.

With no path it reads where Claude Code and Codex keep their sessions
(``~/.claude/projects``, ``$CLAUDE_CONFIG_DIR/projects``, ``~/.codex/sessions``,
``$CODEX_HOME/sessions``). A progress bar is drawn on a terminal once the run takes
over a second, never on a pipe.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assembler.errors import UsageError

if TYPE_CHECKING:
    from assembler.analysis.fleet import Bucket, UsageReport

PROGRESS_AFTER = 1.0  # seconds before a bar is worth drawing
CAUSES_SHOWN = 3


def _day(flag: str, text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{flag}: expected a date as YYYY-MM-DD, found {text!r}") from None


def _targets(args: argparse.Namespace) -> list[str]:
    from assembler.analysis.fleet import default_places

    if args.paths:
        return list(args.paths)
    places = default_places(os.environ, Path.home())
    if not places:
        raise UsageError(
            "no sessions in the default places (~/.claude/projects, $CLAUDE_CONFIG_DIR/projects,"
            " ~/.codex/sessions, $CODEX_HOME/sessions); name a folder or a file"
        )
    return [str(p) for p in places]


def _names(targets: list[str], since: date | None) -> list[str]:
    """Every session of the targets; a file last written before ``since`` holds nothing
    after it and is not read."""
    from assembler.analysis.app import session_names

    names: list[str] = []
    for target in targets:
        for name in session_names(target):
            if since is not None and Path(name).is_file():
                written = datetime.fromtimestamp(Path(name).stat().st_mtime, tz=UTC).date()
                if written < since:
                    continue
            names.append(name)
    return list(dict.fromkeys(names))  # a folder named inside another is read once


@contextmanager
def _progress(total: int) -> Iterator[Callable[[], None]]:
    """A callback per finished session; a bar on a terminal once past a second."""
    if not sys.stderr.isatty() or total < 2:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    start = time.monotonic()
    bar: Progress | None = None
    done = 0

    def tick() -> None:
        nonlocal bar, done
        done += 1
        if bar is None and time.monotonic() - start > PROGRESS_AFTER:
            bar = Progress(
                "sessions",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                transient=True,
                console=Console(stderr=True),  # the output may be piped; the bar never is
            )
            bar.start()
            bar.add_task("", total=total, completed=done)
        elif bar is not None:
            bar.update(bar.task_ids[0], completed=done)

    try:
        yield tick
    finally:
        if bar is not None:
            bar.stop()


def _money(x: float) -> str:
    return f"${x:,.2f}" if abs(x) >= 100 else f"${x:.4f}"


def bucket_json(b: Bucket) -> dict[str, Any]:
    return {
        "requests": b.requests,
        "billed_usd": round(b.billed, 8) if b.billed_requests else None,
        "billed_requests": b.billed_requests,
        "simulated_usd": round(b.simulated, 8),
        "usd_without_cache": round(b.without_cache, 8),
        "hit_ratio": round(b.hit_ratio, 6),
        "cache_writes_never_read": b.unread_writes,
        "miss_causes": [
            {"cause": c, "misses": n, "usd_lost": round(usd, 8)}
            for c, n, usd in b.top_causes(len(b.causes))
        ],
    }


def usage_json(r: UsageReport) -> dict[str, Any]:
    return {
        "sessions": r.sessions,
        "rows": [
            {"project": project, "day": day.isoformat(), **bucket_json(b)}
            for (project, day), b in sorted(r.rows.items())
        ],
        "projects": [{"project": p, **bucket_json(b)} for p, b in r.projects().items()],
        "total": bucket_json(r.total()),
        "failures": [{"path": f.path, "error": f.message} for f in r.failures],
    }


def _row(project: str, day: str, b: Bucket) -> dict[str, str]:
    return {
        "project": project,
        "day": day,
        "requests": f"{b.requests:,}",
        "billed": _money(b.billed) if b.billed_requests else "—",
        "simulated": _money(b.simulated),
        "no cache": _money(b.without_cache),
        "hit": f"{b.hit_ratio:.0%}",
        "writes never read": f"{b.unread_writes:,}",
    }


def usage_lines(r: UsageReport) -> list[str]:
    from assembler.cli.analysis_commands import table_lines

    if not r.rows:
        lines = ["no request in the sessions read (or none in the dates and project asked for)"]
    else:
        rows = [_row(p, d.isoformat(), b) for (p, d), b in sorted(r.rows.items())]
        rows.append(_row("total", "", r.total()))
        columns = list(rows[0])
        lines = table_lines(rows, columns)
        lines.insert(len(lines) - 1, "")
        lines += ["", "top miss causes by dollars lost:"]
        for project, b in r.projects().items():
            top = b.top_causes(CAUSES_SHOWN)
            said = " · ".join(
                f"{c} {_money(usd)} ({n} miss{'' if n == 1 else 'es'})" for c, n, usd in top
            )
            lines.append(f"  {project}: {said or 'no miss'}")
    lines += [
        "",
        f"{r.sessions} session{'' if r.sessions == 1 else 's'} in {r.seconds:.1f} s",
        "billed: as the provider reported it · simulated: the cache simulation of the same "
        "requests · hit: cache reads over input tokens, as billed where reported",
    ]
    if r.failures:
        lines += ["", f"could not be read ({len(r.failures)}):"]
        lines += [f"  {f.line()}" for f in r.failures]
    return lines


def _write_parquet(r: UsageReport, target: str) -> None:
    from assembler.cli.analysis_commands import _need

    _need("pyarrow", "--parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = usage_json(r)["rows"]
    for row in rows:
        row["miss_causes"] = json.dumps(row["miss_causes"], ensure_ascii=False)
    try:
        pq.write_table(pa.Table.from_pylist(rows), target)
    except OSError as exc:
        raise UsageError(f"{target}: --parquet: cannot write: {exc}") from None


def cmd_usage(args: argparse.Namespace) -> int:
    from assembler.analysis.fleet import Options, collect, run_usage

    since, until = _day("--since", args.since), _day("--until", args.until)
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers: expected an integer ≥ 1, found {args.workers}")
    project = (args.project or "").lower()

    def keep(name: str, day: date) -> bool:
        return (
            (since is None or day >= since)
            and (until is None or day <= until)
            and project in name.lower()
        )

    names = _names(_targets(args), since)
    options = Options()  # each session as recorded, under the design's own layout
    with _progress(len(names)) as tick:
        report = collect(run_usage(names, options, workers=args.workers, done=tick), keep)
    if args.parquet:
        _write_parquet(report, args.parquet)
    if args.json:
        print(json.dumps(usage_json(report), ensure_ascii=False, indent=2))
    else:
        print("\n".join(usage_lines(report)))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "usage", help="your Claude Code / Codex traffic: the bill per project and day, simulated"
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="folders, files or zips (default: ~/.claude/projects, ~/.codex/sessions and "
        "$CLAUDE_CONFIG_DIR, $CODEX_HOME)",
    )
    p.add_argument("--since", metavar="YYYY-MM-DD", help="first day to count (UTC)")
    p.add_argument("--until", metavar="YYYY-MM-DD", help="last day to count (UTC)")
    p.add_argument("--project", help="only projects whose folder contains this text")
    p.add_argument("--workers", type=int, metavar="N", help="processes (default: every core)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--parquet", metavar="FILE", help="also write the rows as a Parquet file")
    p.set_defaults(run=cmd_usage)
