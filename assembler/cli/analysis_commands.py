"""The ``analyze`` subcommand of ``python -m assembler``.

``analyze`` prints a per-step table (or JSON / CSV); given a folder or a glob
it analyses every session in parallel and prints the aggregate (``batch.py``).
Bad input raises the errors ``cli.main`` turns into exit 2.

What one command needs is imported when it runs: building the parser, or
analysing one session, does not pay for the batch, fleet or report modules.
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from assembler.analysis.engine import TTLS, Layout, holds_frozen, load_layout
from assembler.cli.checks import check_provider_model, open_input, provider_errors
from assembler.errors import UsageError
from assembler.limits import one_line
from assembler.output_files import output_target, write_text
from assembler.safe_text import csv_row, printable

if TYPE_CHECKING:
    from assembler.analysis.engine import SessionAnalysis
    from assembler.analysis.fleet import BatchReport, Options
    from assembler.sessions.model import Session

EXIT_THRESHOLD = 1
EXIT_BAD_INPUT = 2
TARGET_HELP = (
    "a session file or a raw transcript (Claude Code, Codex, request log, OTel traces), "
    "a zip of them, or a folder or a quoted glob of any mix"
)
ONE_HELP = (
    "a session file or a raw transcript (Claude Code, Codex, request log, OTel traces), "
    "or a zip or folder holding one (a zip's member as ARCHIVE.zip:MEMBER)"
)


_TEXT_COLUMNS = {"", "label", "function", "miss", "project", "day"}


def table_lines(rows: list[dict[str, Any]], columns: list[str]) -> list[str]:
    """Numbers right-aligned, text left-aligned; widths of the text as printed (escaped)."""
    rows = [{c: printable(str(r[c])) for c in columns} for r in rows]
    widths = {c: max([len(c), *(len(str(r[c])) for r in rows)]) for c in columns}

    def cell(c: str, v: Any) -> str:
        return str(v).ljust(widths[c]) if c in _TEXT_COLUMNS else str(v).rjust(widths[c])

    out = ["  ".join(cell(c, c) for c in columns).rstrip()]
    out += ["  ".join(cell(c, r[c]) for c in columns).rstrip() for r in rows]
    return out


def money(x: float) -> str:
    return f"${x:.4f}"


def human_analysis(
    a: SessionAnalysis, recorded: bool = True, scales: dict[str, float] | None = None
) -> str:
    """A readable table, the totals and one sentence per miss; ``recorded``: analysed at the
    session's own provider and model, so its measured usage is a bill to show (first, the
    simulation beside it) and to check the simulation against; ``scales``: the factors that
    scaled sizes to the bill (``size_scales``)."""
    from assembler.analysis.bill import (
        agreement,
        agreement_lines,
        bill_first,
        bill_first_lines,
        compare_measured,
        scale_note,
    )
    from assembler.analysis.engine import diagnostic_lines
    from assembler.analysis.reports import analysis_rows, priced_as_lines, rules_lines

    rows = []
    for r, s in zip(analysis_rows(a), a.steps, strict=True):
        rows.append(
            {
                "step": r["step"],
                "label": r["label"],
                "function": r["function"],
                "total": f"{r['total']:,}",
                "read": f"{r['read']:,}",
                "write": f"{r['write']:,}",
                "uncached": f"{r['uncached']:,}",
                "hit": f"{s.hit_ratio:.0%}",
                "usd": money(s.usd),
                "miss": f"{r['miss_component']} ({r['miss_reason']})" if s.miss else "",
            }
        )
    t = a.totals
    approx = " (approximate: this model's tokenizer is not public)" if a.approximate_tokens else ""
    billed_ttls = sorted({s.write_ttl for s in a.steps if s.write_ttl})
    as_billed = f" · writes as billed: {', '.join(billed_ttls)}" if billed_ttls else ""
    note = scale_note(scales or {})
    checks = compare_measured(a) if recorded else []
    bill = bill_first(a, checks) if recorded else None
    lines = [
        f"session {a.session} · layout {a.layout} · {a.provider} {a.model} · lifetime {a.ttl}"
        + as_billed,
        f"tokens counted with tiktoken{approx}" + (f" · {note}" if note else ""),
        *rules_lines(a),
        "",
        *table_lines(
            rows,
            [
                "step",
                "label",
                "function",
                "total",
                "read",
                "write",
                "uncached",
                "hit",
                "usd",
                "miss",
            ],
        ),
        "",
        f"totals: {int(t['tokens']):,} tokens · read {int(t['read']):,} · write {int(t['write']):,}"
        f" · uncached {int(t['uncached']):,} · hit ratio {t['hit_ratio']:.1%}",
    ]
    simulated_cost = f"{money(t['usd'])} with caching, {money(t['usd_without_cache'])} without"
    if bill is not None and bill.comes_first:  # the bill first: it is what the session cost
        lines += bill_first_lines(bill)
        every = "" if bill.billed_steps == bill.steps else f" (all {len(a.steps):,} steps)"
        lines.append(f"simulated cost: {simulated_cost}{every}")
    else:  # a sample of usage on a few steps: beside the simulated cost
        lines.append(f"cost: {simulated_cost}")
        lines += bill_first_lines(bill) if bill is not None else []
    lines += priced_as_lines(a.steps)
    if not recorded and any(s.measured is not None for s in a.steps):
        # the usage was billed at the recorded provider and model: no bill at another's
        lines.append(
            "billed: shown at the recorded provider and model (without --provider/--model)"
        )
    misses = [s for s in a.steps if s.miss is not None]
    if misses:
        lines += ["", "misses:"]
        lines += [f"  step {s.step}: {s.miss.sentence}" for s in misses if s.miss is not None]
    lines += diagnostic_lines(a.steps)
    if checks:
        lines += ["", *agreement_lines(agreement(checks))]
        lines += [f"  {c.sentence}" for c in checks if c.reason is not None]
    return "\n".join(lines)


def is_batch_target(target: str) -> bool:
    """A folder, a glob or a zip of several sessions, not one session's file."""
    if os.path.isfile(target) and not target.lower().endswith(".zip"):
        return False  # surely one session: the batch machinery is not imported
    from assembler.analysis.app import is_many

    return is_many(target)


def session_files(target: str) -> list[str]:
    """The sessions of a folder, zip or glob, as :mod:`assembler.analysis.app` names them."""
    from assembler.analysis.app import session_names

    return session_names(target)


def _fleet_wanted(args: argparse.Namespace) -> bool:
    return bool(args.engine == "ray" or "://" in args.session)


def _check_outputs(args: argparse.Namespace, inputs: list[str]) -> None:
    """``--otlp`` and a local ``--parquet`` refused before any work when they cannot be
    written (a device, a FIFO, an input, a missing folder)."""
    if args.otlp:
        output_target(args.otlp, "--otlp", inputs)
    if args.parquet and "://" not in args.parquet:
        output_target(args.parquet, "--parquet", inputs, folder=True)


def _write_outputs(args: argparse.Namespace, a: SessionAnalysis, session: Session) -> None:
    """``--parquet`` / ``--otlp`` for one session (the per-step table is printed as usual)."""
    if args.parquet:
        _need("pyarrow", "--parquet")
        from assembler.analysis.reports import check_written, write_session_tables

        with _writing(args.parquet, "--parquet"):
            write_session_tables(a, session, args.session, args.parquet)
        check_written(args.parquet)
    if args.otlp:
        from assembler.analysis.reports import otlp_line

        write_text(args.otlp, otlp_line(a, args.session), "--otlp", [args.session])


@contextmanager
def _writing(target: str, flag: str) -> Iterator[None]:
    try:
        yield
    except (OSError, ValueError) as exc:
        message = one_line(str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc))
        raise UsageError(f"{target}: {flag}: cannot write: {message}") from None


def _need(module: str, flag: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise UsageError(f"{flag} needs {module}, which is not installed: pip install .[fleet]")


def _run_fleet(args: argparse.Namespace, options: Options) -> BatchReport:
    """The batch through the fleet engines (Ray, Parquet, spans, URIs)."""
    from assembler.analysis.fleet import run_fleet, sources

    if args.engine == "ray":
        _need("ray", "--engine ray")
    if args.parquet or "://" in args.session:
        _need("pyarrow", "--parquet" if args.parquet else args.session)
    try:
        report = run_fleet(
            sources(args.session),
            options,
            engine=args.engine,
            workers=args.workers,
            address=args.address,
            parquet=args.parquet,
            otlp=args.otlp,
        )
    except (ValueError, RuntimeError, OSError) as exc:
        raise UsageError(str(exc).strip().splitlines()[0]) from None
    if args.parquet:
        print(f"wrote Parquet tables sessions, steps, blocks under {args.parquet}", file=sys.stderr)
    if args.otlp:
        print(f"wrote {len(report.sessions)} traces to {args.otlp}", file=sys.stderr)
    return report


def cmd_analyze_batch(args: argparse.Namespace) -> int:
    from assembler.analysis.fleet import Options, analyze_batch, batch_json, human_batch

    if args.csv:
        raise UsageError("--csv applies to one session; use --json for a folder or a glob")
    options = Options(layout=args.layout, provider=args.provider, model=args.model, ttl=args.ttl)
    load_layout(args.layout)  # a bad layout is one error, not one per session
    check_provider_model(args.session, args.provider, args.model)
    if _fleet_wanted(args) or args.parquet or args.otlp:
        if "://" not in args.session:
            _check_outputs(args, [str(p) for p in session_files(args.session)])
        report = _run_fleet(args, options)
    else:
        report = analyze_batch(session_files(args.session), options, workers=args.workers)
    if args.json:
        print(json.dumps(batch_json(report), indent=2, ensure_ascii=False))
    else:
        print(human_batch(report))
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    if args.json and args.csv:
        raise UsageError("--json and --csv cannot be combined")
    if args.workers is not None:
        from assembler.analysis.fleet import MAX_WORKERS

        if not 1 <= args.workers <= MAX_WORKERS:
            raise UsageError(
                f"{args.session}: --workers: expected an integer from 1 to {MAX_WORKERS:,},"
                f" found {args.workers}"
            )
    if args.address and args.engine != "ray":  # else one session would ignore it
        raise UsageError("--address applies to --engine ray")
    if is_batch_target(args.session) or _fleet_wanted(args):
        return cmd_analyze_batch(args)
    layout = load_layout(args.layout)
    check_provider_model(args.session, args.provider, args.model)
    _check_outputs(args, [args.session])
    # One analysis, then exit: what the run makes lives until then or is freed by
    # reference counting (the session and its analysis hold no cycles), so the
    # collector stays off while it runs. Switched on after analyze(), its first
    # collection would walk every object the analysis made, and each one the
    # output's allocations set off would walk them again.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        _analyze_one(args, layout)
    finally:
        if was_enabled:  # an in-process caller gets its collector back, without the walk:
            if not holds_frozen():  # to the oldest generation, not frozen for good
                gc.freeze()
                gc.unfreeze()
            gc.enable()
    return 0


def _analyze_one(args: argparse.Namespace, layout: Layout) -> None:
    from assembler.analysis.engine import analyze
    from assembler.analysis.reports import write_analysis_json

    session = open_input(args.session, "analyze")
    with provider_errors(session.source, args.provider, args.model):
        a = analyze(session, layout, provider=args.provider, model=args.model, ttl=args.ttl)
    _write_outputs(args, a, session)
    from assembler.analysis.bill import size_scales
    from assembler.analysis.engine import runs_as_recorded

    recorded = runs_as_recorded(session, args.provider, args.model)
    scales = size_scales(session, a, args.provider, args.model)
    if args.json:
        write_analysis_json(a, sys.stdout.write, recorded, scales)  # one step at a time
        sys.stdout.write("\n")
    elif args.csv:
        from assembler.analysis.reports import ROW_COLUMNS, analysis_rows

        writer = csv.DictWriter(sys.stdout, fieldnames=list(ROW_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows(map(csv_row, analysis_rows(a)))  # text cells run as no formula
    else:
        print(human_analysis(a, recorded, scales))


def register(sub: Any) -> None:
    """Add the analysis subcommands to the CLI's subparsers."""
    p = sub.add_parser("analyze", help="tokens, cache reads/writes, misses and cost per step")
    p.add_argument("session", help=TARGET_HELP)
    p.add_argument("--layout", default="seed", help="built-in layout name or a layout file")
    p.add_argument("--provider", help="override the session's provider")
    p.add_argument("--model", help="override the session's model")
    p.add_argument("--ttl", choices=list(TTLS), help="cache lifetime (default: the layout's)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--csv", action="store_true")
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="processes for a folder or glob (default: every core; at most one per file"
        " and two per core)",
    )
    fleet = p.add_argument_group("fleet (docs/fleet.md; the Ray engine and Parquet need .[fleet])")
    fleet.add_argument("--engine", choices=["local", "ray"], default="local")
    fleet.add_argument("--address", help="Ray cluster to use (default: start a local Ray)")
    fleet.add_argument("--parquet", metavar="DIR", help="write sessions, steps, blocks tables")
    fleet.add_argument("--otlp", metavar="FILE", help="write per-step spans as OTLP JSON Lines")
    p.set_defaults(run=cmd_analyze)
