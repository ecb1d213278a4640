"""The ``compare`` subcommand of ``python -m assembler``.

``compare`` runs two layouts and exits 1 when the head's hit ratio drops or its
cost rises past a threshold, 0 otherwise; ``--junit FILE`` also writes the
result as JUnit XML, and a folder or glob compares every session in it. Bad
input raises the errors ``cli.main`` turns into exit 2.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assembler.analysis.engine import TTLS, load_layout
from assembler.cli.analysis_commands import (
    EXIT_BAD_INPUT,
    EXIT_THRESHOLD,
    is_batch_target,
    money,
    session_files,
    table_lines,
)
from assembler.cli.checks import check_provider_model, provider_errors
from assembler.errors import UsageError
from assembler.sessions.loader import load_session

if TYPE_CHECKING:
    from assembler.analysis.advice import Comparison
    from assembler.analysis.reports import CaseResult


def human_comparison(c: Comparison, max_drop: float, max_increase: float) -> str:
    b, h = c.base.totals, c.head.totals
    rows = [
        {"": "hit ratio", "base": f"{b['hit_ratio']:.1%}", "head": f"{h['hit_ratio']:.1%}"},
        {"": "read", "base": f"{int(b['read']):,}", "head": f"{int(h['read']):,}"},
        {"": "write", "base": f"{int(b['write']):,}", "head": f"{int(h['write']):,}"},
        {"": "uncached", "base": f"{int(b['uncached']):,}", "head": f"{int(h['uncached']):,}"},
        {"": "cost", "base": money(b["usd"]), "head": money(h["usd"])},
    ]
    lines = [
        f"session {c.base.session} · {c.base.provider} {c.base.model}: "
        f"base {c.base.layout} vs head {c.head.layout}",
        "",
        *table_lines(rows, ["", "base", "head"]),
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


def exceeded(c: Comparison, max_drop: float, max_increase: float) -> bool:
    return c.hit_ratio_drop_points > max_drop or c.cost_increase_percent > max_increase


def _compare_one(args: argparse.Namespace, path: str) -> Comparison:
    from assembler.analysis.advice import compare

    session = load_session(path)
    base, head = load_layout(args.base), load_layout(args.head)
    with provider_errors(session.source, args.provider, args.model):
        return compare(session, base, head, provider=args.provider, model=args.model, ttl=args.ttl)


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
        from assembler.analysis.reports import junit_xml, write_junit

        xml = junit_xml(results, args.max_hit_ratio_drop, args.max_cost_increase)
        try:
            write_junit(Path(args.junit), xml)
        except OSError as exc:
            raise UsageError(f"--junit {args.junit}: cannot write: {exc}") from None


def cmd_compare(args: argparse.Namespace) -> int:
    from assembler.analysis.reports import CaseResult

    for flag, value in (
        ("--max-hit-ratio-drop", args.max_hit_ratio_drop),
        ("--max-cost-increase", args.max_cost_increase),
    ):
        if not math.isfinite(value) or value < 0:  # NaN compares false: it would pass every gate
            raise UsageError(f"{args.session}: {flag}: expected a finite number ≥ 0, found {value}")
    check_provider_model(args.session, args.provider, args.model)
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
    from assembler.analysis.reports import CaseResult

    load_layout(args.base)  # a bad layout is one error, not one per session
    load_layout(args.head)
    results: list[CaseResult] = []
    outputs: list[dict[str, Any]] = []
    n_failed = n_errors = 0
    for path in map(str, session_files(args.session)):
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
            f"{len(results)} session{'' if len(results) == 1 else 's'} compared:"
            f" {n_failed} past a threshold, "
            f"{n_errors} could not be compared"
        )
    if n_errors:
        return EXIT_BAD_INPUT
    return EXIT_THRESHOLD if n_failed else 0


def register(sub: Any) -> None:
    """Add ``compare`` to the CLI's subparsers."""
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
