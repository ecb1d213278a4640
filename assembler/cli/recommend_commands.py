"""``python -m assembler recommend``: the cheapest layout for a session or a folder of them.

Prints the cost and hit ratio before and after, the saving per session and
per month, and one sentence per change; ``-o FILE`` writes the layout, which
``compare --base CURRENT --head FILE`` bills the same way.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assembler.analysis.engine import load_layout
from assembler.cli.analysis_commands import TARGET_HELP, is_batch_target
from assembler.cli.checks import check_provider_model, open_input, provider_errors
from assembler.errors import UsageError
from assembler.output_files import output_target, write_text

if TYPE_CHECKING:  # the search imports numpy: loaded when the command runs
    from assembler.analysis.advice import Recommendation

DEFAULT_SESSIONS_PER_MONTH = 1000


def recommendation_lines(r: Recommendation, per_month: int) -> list[str]:
    return [
        f"provider {r.provider} · model {r.model} · {r.sessions} session(s)",
        f"before  {r.current.name:<12} ${r.before_usd:.4f}  hit ratio {r.before_hit:.1%}",
        f"after   {r.recommended.name:<12} ${r.after_usd:.4f}  hit ratio {r.after_hit:.1%}",
        f"saving  ${r.saving_per_session:.4f} per session · ${r.saving_per_month(per_month):,.2f}"
        f" per month at {per_month:,} sessions",
        *(f"- {c}" for c in r.changes),
        f"- {r.keep_alive}",
    ]


def recommendation_json(r: Recommendation, per_month: int) -> dict[str, Any]:
    from assembler.analysis.advice import layout_text

    return {
        "provider": r.provider,
        "model": r.model,
        "sessions": r.sessions,
        "before": {"layout": r.current.name, "usd": r.before_usd, "hit_ratio": r.before_hit},
        "after": {"layout": r.recommended.name, "usd": r.after_usd, "hit_ratio": r.after_hit},
        "saving_per_session": r.saving_per_session,
        "saving_per_month": r.saving_per_month(per_month),
        "sessions_per_month": per_month,
        "changes": list(r.changes),
        "keep_alive": r.keep_alive,
        "layout": layout_text(r.recommended),
    }


def cmd_recommend(args: argparse.Namespace) -> int:
    from assembler.analysis.advice import layout_text, recommend
    from assembler.analysis.app import open_session, session_names

    if args.sessions_per_month < 0:
        raise UsageError(
            f"{args.session}: --sessions-per-month: expected an integer ≥ 0,"
            f" found {args.sessions_per_month}"
        )
    check_provider_model(args.session, args.provider, args.model)
    inputs = [Path(args.session), args.layout]  # a layout file is an input too
    if args.output:
        output_target(args.output, "-o", inputs)  # a bad target refused before the search
    if is_batch_target(args.session):  # one agent's sessions, searched together
        sessions = [open_session(name).session for name in session_names(args.session)]
    else:
        sessions = [open_input(args.session, "recommend")]
    layout = load_layout(args.layout)
    with provider_errors(args.session, args.provider, args.model):
        r = recommend(sessions, layout, provider=args.provider, model=args.model)
    if args.output:
        write_text(args.output, layout_text(r.recommended), "-o", inputs)
    if args.json:
        print(
            json.dumps(
                recommendation_json(r, args.sessions_per_month), ensure_ascii=False, indent=2
            )
        )
    else:
        print("\n".join(recommendation_lines(r, args.sessions_per_month)))
        if args.output:
            print(f"layout written to {args.output}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("recommend", help="the cheapest layout for a session or a folder of them")
    p.add_argument("session", help=TARGET_HELP + " (one agent's sessions, searched together)")
    p.add_argument("--layout", default="seed", help="the current layout: built-in name or a file")
    p.add_argument("--provider", help="bill under this provider instead of the session's")
    p.add_argument("--model", help="bill under this model instead of the session's")
    p.add_argument("-o", "--output", metavar="FILE", help="write the recommended layout here")
    p.add_argument(
        "--sessions-per-month",
        type=int,
        default=DEFAULT_SESSIONS_PER_MONTH,
        metavar="N",
        help=f"volume for the monthly saving (default {DEFAULT_SESSIONS_PER_MONTH:,})",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_recommend)
