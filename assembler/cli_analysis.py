"""The analysis subcommands (``analyze``, ``compare``) of ``python -m assembler``.

``analyze`` prints a per-step table (or JSON / CSV); ``compare`` runs two
layouts and exits 1 when the head's hit ratio drops or its cost rises past a
threshold, 0 otherwise. Bad input raises the errors ``cli.main`` turns into
exit 2.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Any

from assembler.analysis import (
    ROW_COLUMNS,
    Comparison,
    SessionAnalysis,
    analysis_json,
    analysis_rows,
    analyze,
    compare,
)
from assembler.errors import UsageError
from assembler.layouts import TTLS, load_layout
from assembler.session import load_session

EXIT_THRESHOLD = 1


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
    lines = [
        f"session {a.session} · layout {a.layout} · {a.provider} {a.model} · lifetime {a.ttl}",
        f"tokens counted with tiktoken{approx}",
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
    misses = [s for s in a.steps if s.miss is not None]
    if misses:
        lines += ["", "misses:"]
        lines += [f"  step {s.step}: {s.miss.sentence}" for s in misses if s.miss is not None]
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


def cmd_analyze(args: argparse.Namespace) -> int:
    if args.json and args.csv:
        raise UsageError("--json and --csv cannot be combined")
    session = load_session(args.session)
    a = analyze(
        session, load_layout(args.layout), provider=args.provider, model=args.model, ttl=args.ttl
    )
    if args.json:
        print(json.dumps(analysis_json(a), indent=2, ensure_ascii=False))
    elif args.csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=list(ROW_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows(analysis_rows(a))
    else:
        print(human_analysis(a))
    return 0


def exceeded(c: Comparison, max_drop: float, max_increase: float) -> bool:
    return c.hit_ratio_drop_points > max_drop or c.cost_increase_percent > max_increase


def cmd_compare(args: argparse.Namespace) -> int:
    if args.max_hit_ratio_drop < 0 or args.max_cost_increase < 0:
        raise UsageError("thresholds must not be negative")
    session = load_session(args.session)
    c = compare(
        session,
        load_layout(args.base),
        load_layout(args.head),
        provider=args.provider,
        model=args.model,
        ttl=args.ttl,
    )
    failed = exceeded(c, args.max_hit_ratio_drop, args.max_cost_increase)
    if args.json:
        out = c.json()
        out["thresholds"] = {
            "max_hit_ratio_drop": args.max_hit_ratio_drop,
            "max_cost_increase": args.max_cost_increase,
            "exceeded": failed,
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(human_comparison(c, args.max_hit_ratio_drop, args.max_cost_increase))
        print("threshold exceeded" if failed else "within thresholds")
    return EXIT_THRESHOLD if failed else 0


def register(sub: Any) -> None:
    """Add the analysis subcommands to the CLI's subparsers."""
    p = sub.add_parser("analyze", help="tokens, cache reads/writes, misses and cost per step")
    p.add_argument("session")
    p.add_argument("--layout", default="seed", help="built-in layout name or a layout file")
    p.add_argument("--provider", help="override the session's provider")
    p.add_argument("--model", help="override the session's model")
    p.add_argument("--ttl", choices=list(TTLS), help="cache lifetime (default: the layout's)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--csv", action="store_true")
    p.set_defaults(run=cmd_analyze)

    p = sub.add_parser("compare", help="two layouts side by side; exit 1 past a threshold")
    p.add_argument("session")
    p.add_argument("--base", required=True, help="layout name or file")
    p.add_argument("--head", required=True, help="layout name or file")
    p.add_argument("--provider")
    p.add_argument("--model")
    p.add_argument("--ttl", choices=list(TTLS))
    p.add_argument("--max-hit-ratio-drop", type=float, default=2.0, metavar="POINTS")
    p.add_argument("--max-cost-increase", type=float, default=5.0, metavar="PERCENT")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_compare)
