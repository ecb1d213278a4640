"""The analysis subcommands (``analyze``, ``compare``) of ``python -m assembler``.

``analyze`` prints a per-step table (or JSON / CSV); given a folder or a glob
it analyses every session in parallel and prints the aggregate (``batch.py``).
``compare`` runs two layouts and exits 1 when the head's hit ratio drops or its
cost rises past a threshold, 0 otherwise; ``--junit FILE`` also writes the
result as JUnit XML, and a folder or glob compares every session in it. Bad
input raises the errors ``cli.main`` turns into exit 2.
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from assembler.analysis.agreement import agreement, agreement_lines
from assembler.analysis.batch import (
    BatchReport,
    Options,
    analyze_batch,
    batch_json,
    human_batch,
    is_batch_target,
)
from assembler.analysis.batch import session_paths as batch_paths
from assembler.analysis.billing import session_costs
from assembler.analysis.compare import Comparison, compare
from assembler.analysis.diagnostics import diagnostic_lines
from assembler.analysis.engine import analyze
from assembler.analysis.junit import CaseResult, junit_xml, write_junit
from assembler.analysis.layouts import TTLS, load_layout
from assembler.analysis.measured import compare_measured
from assembler.analysis.report_json import rules_lines, write_analysis_json
from assembler.analysis.report_rows import ROW_COLUMNS, analysis_rows
from assembler.analysis.results import SessionAnalysis
from assembler.cache.pricing import PROVIDER_IDS, check_model
from assembler.cache.providers import normalize_provider
from assembler.errors import UsageError, provider_error
from assembler.sessions.loader import load_session
from assembler.sessions.model import Session

EXIT_THRESHOLD = 1
EXIT_BAD_INPUT = 2


_TEXT_COLUMNS = {"", "label", "function", "miss"}


def _table(rows: list[dict[str, Any]], columns: list[str]) -> list[str]:
    """Numbers right-aligned, text left-aligned."""
    widths = {c: max([len(c), *(len(str(r[c])) for r in rows)]) for c in columns}

    def cell(c: str, v: Any) -> str:
        return str(v).ljust(widths[c]) if c in _TEXT_COLUMNS else str(v).rjust(widths[c])

    out = ["  ".join(cell(c, c) for c in columns).rstrip()]
    out += ["  ".join(cell(c, r[c]) for c in columns).rstrip() for r in rows]
    return out


def _money(x: float) -> str:
    return f"${x:.4f}"


def human_analysis(a: SessionAnalysis) -> str:
    """A readable table, the totals and one sentence per miss."""
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
                "usd": _money(s.usd),
                "miss": f"{r['miss_component']} ({r['miss_reason']})" if s.miss else "",
            }
        )
    t = a.totals
    approx = " (approximate: this model's tokenizer is not public)" if a.approximate_tokens else ""
    billed_ttls = sorted({s.write_ttl for s in a.steps if s.write_ttl})
    as_billed = f" · writes as billed: {', '.join(billed_ttls)}" if billed_ttls else ""
    lines = [
        f"session {a.session} · layout {a.layout} · {a.provider} {a.model} · lifetime {a.ttl}"
        + as_billed,
        f"tokens counted with tiktoken{approx}",
        *rules_lines(a),
        "",
        *_table(
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
        f"cost: {_money(t['usd'])} with caching, {_money(t['usd_without_cache'])} without",
    ]
    costs = session_costs(a)
    if costs.billed is not None:
        lines.append(
            f"billed: {_money(costs.billed)} for the {costs.billed_steps}"
            f" step{'' if costs.billed_steps == 1 else 's'} with usage"
            f" (simulated {_money(costs.simulated_billed_steps)} for the same)"
        )
    misses = [s for s in a.steps if s.miss is not None]
    if misses:
        lines += ["", "misses:"]
        lines += [f"  step {s.step}: {s.miss.sentence}" for s in misses if s.miss is not None]
    lines += diagnostic_lines(a.steps)
    checks = compare_measured(a)
    if checks:
        lines += ["", *agreement_lines(agreement(checks))]
        lines += [f"  {c.sentence}" for c in checks if c.reason is not None]
    return "\n".join(lines)


def human_comparison(c: Comparison, max_drop: float, max_increase: float) -> str:
    b, h = c.base.totals, c.head.totals
    rows = [
        {"": "hit ratio", "base": f"{b['hit_ratio']:.1%}", "head": f"{h['hit_ratio']:.1%}"},
        {"": "read", "base": f"{int(b['read']):,}", "head": f"{int(h['read']):,}"},
        {"": "write", "base": f"{int(b['write']):,}", "head": f"{int(h['write']):,}"},
        {"": "uncached", "base": f"{int(b['uncached']):,}", "head": f"{int(h['uncached']):,}"},
        {"": "cost", "base": _money(b["usd"]), "head": _money(h["usd"])},
    ]
    lines = [
        f"session {c.base.session} · {c.base.provider} {c.base.model}: "
        f"base {c.base.layout} vs head {c.head.layout}",
        "",
        *_table(rows, ["", "base", "head"]),
        "",
    ]
    if c.first_divergent_step is None:
        lines.append("the two layouts give the same cache outcome at every step")
    else:
        who = f"{c.breaking_component} ({c.breaking_layer})" if c.breaking_component else "?"
        lines.append(f"first divergent step: {c.first_divergent_step}; breaking component: {who}")
        if c.sentence:
            lines.append(f"  {c.sentence}")
    lines.append(
        f"hit ratio drop: {c.hit_ratio_drop_points:+.2f} points (max {max_drop:g}); "
        f"cost increase: {c.cost_increase_percent:+.2f} % (max {max_increase:g} %)"
    )
    return "\n".join(lines)


def _paths(target: str) -> list[Path]:
    try:
        return batch_paths(target)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _fleet_wanted(args: argparse.Namespace) -> bool:
    return bool(args.engine == "ray" or "://" in args.session)


def _write_outputs(args: argparse.Namespace, a: SessionAnalysis, session: Session) -> None:
    """``--parquet`` / ``--otlp`` for one session (the per-step table is printed as usual)."""
    try:
        if args.parquet:
            _need("pyarrow", "--parquet")
            from assembler.analysis.parquet_tables import write_session_tables

            write_session_tables(a, session, args.session, args.parquet)
        if args.otlp:
            from assembler.analysis.otlp_spans import otlp_line

            Path(args.otlp).write_text(otlp_line(a, args.session), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write: {exc}") from None


def _need(module: str, flag: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise UsageError(f"{flag} needs {module}, which is not installed: pip install .[fleet]")


def _run_fleet(args: argparse.Namespace, options: Options) -> BatchReport:
    """The batch through the fleet engines (Ray, Parquet, spans, URIs)."""
    from assembler.analysis.fleet import run_fleet
    from assembler.analysis.fleet_sources import sources

    if args.engine == "ray":
        _need("ray", "--engine ray")
    if args.parquet or "://" in args.session:
        _need("pyarrow", "--parquet" if args.parquet else args.session)
    if args.address and args.engine != "ray":
        raise UsageError("--address applies to --engine ray")
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
    if args.csv:
        raise UsageError("--csv applies to one session; use --json for a folder or a glob")
    options = Options(layout=args.layout, provider=args.provider, model=args.model, ttl=args.ttl)
    load_layout(args.layout)  # a bad layout is one error, not one per session
    if _fleet_wanted(args) or args.parquet or args.otlp:
        report = _run_fleet(args, options)
    else:
        report = analyze_batch(_paths(args.session), options, workers=args.workers)
    if args.json:
        print(json.dumps(batch_json(report), indent=2, ensure_ascii=False))
    else:
        print(human_batch(report))
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    if args.json and args.csv:
        raise UsageError("--json and --csv cannot be combined")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if is_batch_target(args.session) or _fleet_wanted(args):
        return cmd_analyze_batch(args)
    layout = load_layout(args.layout)
    if args.provider and args.model:  # the arguments are checked before the session is read
        named = args.provider.lower()
        check_model(named if named in PROVIDER_IDS else normalize_provider(named), args.model)
    session = load_session(args.session)
    try:
        a = analyze(session, layout, provider=args.provider, model=args.model, ttl=args.ttl)
    except UsageError as exc:
        raise UsageError(
            provider_error(
                session.source,
                str(exc),
                provider_given=bool(args.provider),
                model_given=bool(args.model),
            )
        ) from None
    _write_outputs(args, a, session)
    # The session and its analysis live until exit: frozen out of the collector, the
    # collections the output's allocations set off no longer walk their millions of
    # objects (a third of the JSON output's time at 5,000 steps).
    gc.freeze()
    if args.json:
        write_analysis_json(a, sys.stdout.write)  # one step at a time
        sys.stdout.write("\n")
    elif args.csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=list(ROW_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows(analysis_rows(a))
    else:
        print(human_analysis(a))
    return 0


def exceeded(c: Comparison, max_drop: float, max_increase: float) -> bool:
    return c.hit_ratio_drop_points > max_drop or c.cost_increase_percent > max_increase


def _compare_one(args: argparse.Namespace, path: str) -> Comparison:
    return compare(
        load_session(path),
        load_layout(args.base),
        load_layout(args.head),
        provider=args.provider,
        model=args.model,
        ttl=args.ttl,
    )


def _comparison_json(c: Comparison, args: argparse.Namespace, failed: bool) -> dict[str, Any]:
    out = c.json()
    out["thresholds"] = {
        "max_hit_ratio_drop": args.max_hit_ratio_drop,
        "max_cost_increase": args.max_cost_increase,
        "exceeded": failed,
    }
    return out


def _write_junit(args: argparse.Namespace, results: list[CaseResult]) -> None:
    if args.junit:
        xml = junit_xml(results, args.max_hit_ratio_drop, args.max_cost_increase)
        try:
            write_junit(Path(args.junit), xml)
        except OSError as exc:
            raise UsageError(f"--junit {args.junit}: cannot write: {exc}") from None


def cmd_compare(args: argparse.Namespace) -> int:
    for flag, value in (
        ("--max-hit-ratio-drop", args.max_hit_ratio_drop),
        ("--max-cost-increase", args.max_cost_increase),
    ):
        if not math.isfinite(value) or value < 0:  # NaN compares false: it would pass every gate
            raise UsageError(f"{flag}: expected a finite number ≥ 0, found {value}")
    if is_batch_target(args.session):
        return cmd_compare_many(args)
    start = time.perf_counter()
    try:
        c = _compare_one(args, args.session)
    except Exception as exc:
        _write_junit(args, [CaseResult(args.session, time.perf_counter() - start, error=str(exc))])
        raise
    _write_junit(args, [CaseResult(args.session, time.perf_counter() - start, c)])
    failed = exceeded(c, args.max_hit_ratio_drop, args.max_cost_increase)
    if args.json:
        print(json.dumps(_comparison_json(c, args, failed), indent=2, ensure_ascii=False))
    else:
        print(human_comparison(c, args.max_hit_ratio_drop, args.max_cost_increase))
        print("threshold exceeded" if failed else "within thresholds")
    return EXIT_THRESHOLD if failed else 0


def cmd_compare_many(args: argparse.Namespace) -> int:
    """Every session of a folder or glob: exit 2 if one could not be compared, else 1 if
    one passed a threshold, else 0. A bad session does not stop the others."""
    load_layout(args.base)  # a bad layout is one error, not one per session
    load_layout(args.head)
    results: list[CaseResult] = []
    outputs: list[dict[str, Any]] = []
    n_failed = n_errors = 0
    for path in map(str, _paths(args.session)):
        start = time.perf_counter()
        try:
            c = _compare_one(args, path)
        except Exception as exc:
            n_errors += 1
            results.append(CaseResult(path, time.perf_counter() - start, error=str(exc)))
            if args.json:
                outputs.append({"path": path, "error": str(exc)})
            else:
                print(f"{path}: error: {exc}\n")
            continue
        results.append(CaseResult(path, time.perf_counter() - start, c))
        failed = exceeded(c, args.max_hit_ratio_drop, args.max_cost_increase)
        n_failed += failed
        if args.json:
            outputs.append({"path": path, **_comparison_json(c, args, failed)})
        else:
            print(f"{path}:")
            print(human_comparison(c, args.max_hit_ratio_drop, args.max_cost_increase))
            print(("threshold exceeded" if failed else "within thresholds") + "\n")
    _write_junit(args, results)
    if args.json:
        print(json.dumps(outputs, indent=2, ensure_ascii=False))
    else:
        print(
            f"{len(results)} sessions compared: {n_failed} past a threshold, "
            f"{n_errors} could not be compared"
        )
    if n_errors:
        return EXIT_BAD_INPUT
    return EXIT_THRESHOLD if n_failed else 0


def register(sub: Any) -> None:
    """Add the analysis subcommands to the CLI's subparsers."""
    p = sub.add_parser("analyze", help="tokens, cache reads/writes, misses and cost per step")
    p.add_argument("session", help="a session file, or a folder or a quoted glob of them")
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
        help="processes for a folder or glob (default: every core)",
    )
    fleet = p.add_argument_group("fleet (docs/fleet.md; the Ray engine and Parquet need .[fleet])")
    fleet.add_argument("--engine", choices=["local", "ray"], default="local")
    fleet.add_argument("--address", help="Ray cluster to use (default: start a local Ray)")
    fleet.add_argument("--parquet", metavar="DIR", help="write sessions, steps, blocks tables")
    fleet.add_argument("--otlp", metavar="FILE", help="write per-step spans as OTLP JSON Lines")
    p.set_defaults(run=cmd_analyze)

    p = sub.add_parser("compare", help="two layouts side by side; exit 1 past a threshold")
    p.add_argument("session", help="a session file, or a folder or a quoted glob of them")
    p.add_argument("--base", required=True, help="layout name or file")
    p.add_argument("--head", required=True, help="layout name or file")
    p.add_argument("--provider")
    p.add_argument("--model")
    p.add_argument("--ttl", choices=list(TTLS))
    p.add_argument("--max-hit-ratio-drop", type=float, default=2.0, metavar="POINTS")
    p.add_argument("--max-cost-increase", type=float, default=5.0, metavar="PERCENT")
    p.add_argument("--json", action="store_true")
    p.add_argument("--junit", metavar="FILE", help="also write the result as JUnit XML")
    p.set_defaults(run=cmd_compare)
