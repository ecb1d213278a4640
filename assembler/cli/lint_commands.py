"""``python -m assembler lint``: which component is volatile, before anything is sent.

Prints one line per component whose text changes under a perturbation, with
its position and what it costs; exits 1 when one of them is an error (a
component that changes within a session ahead of stable cached content, or a
recorded block that differs from the previous request in a few characters),
so it can gate CI next to ``compare``.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from assembler.analysis.engine import load_layout
from assembler.sessions.loader import load_session

if TYPE_CHECKING:
    from assembler.analysis.advice import LintReport

EXIT_ERROR = 1


def lint_json(report: LintReport) -> dict[str, Any]:
    return {
        "session": report.session,
        "layout": report.layout,
        "errors": report.errors,
        "midnights": report.midnights,
        "perturbations": {p.key: p.label for p in report.perturbations},
        "components": [
            {
                "name": c.name,
                "layer": c.layer,
                "position": c.position,
                "changes": list(c.changes),
                "tokens_at_risk": c.tokens_at_risk,
                "severity": c.severity,
                "cost": c.cost,
                "fix": c.fix,
            }
            for c in report.components
        ],
        "recorded": [
            {"step": f.step, "block": f.block, "before": f.before, "after": f.after}
            for f in report.recorded
        ],
    }


def cmd_lint(args: argparse.Namespace) -> int:
    from assembler.analysis.advice import lint_lines, lint_session

    report = lint_session(load_session(args.session), load_layout(args.layout))
    if args.json:
        print(json.dumps(lint_json(report), ensure_ascii=False, indent=2))
    else:
        print("\n".join(lint_lines(report)))
    return EXIT_ERROR if report.errors else 0


def register(sub: Any) -> None:
    p = sub.add_parser("lint", help="volatile components found by perturbation; exit 1 on an error")
    p.add_argument("session", help="a session file")
    p.add_argument("--layout", default="seed", help="built-in layout name or a layout file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_lint)
