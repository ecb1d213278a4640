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
from assembler.limits import one_line
from assembler.output_files import output_target, write_text
from assembler.sessions.model import Session

if TYPE_CHECKING:  # the search imports numpy: loaded when the command runs
    from assembler.analysis.advice import Recommendation, RecordedPlan
    from assembler.analysis.fleet import Failure

DEFAULT_SESSIONS_PER_MONTH = 1000


def saving_line(per_session: float, monthly: float, per_month: int) -> str:
    return (
        f"saving  ${per_session:.4f} per session · ${monthly:,.2f} per month at {per_month:,}"
        " sessions"
    )


def recommendation_lines(r: Recommendation, per_month: int) -> list[str]:
    return [
        f"provider {r.provider} · model {r.model} · {r.sessions} session(s)",
        f"before  {r.current.name:<12} ${r.before_usd:.4f}  hit ratio {r.before_hit:.1%}",
        f"after   {r.recommended.name:<12} ${r.after_usd:.4f}  hit ratio {r.after_hit:.1%}",
        saving_line(r.saving_per_session, r.saving_per_month(per_month), per_month),
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


def plan_lines(p: RecordedPlan, per_month: int) -> list[str]:
    billed = f" · billed ${p.billed_usd:.4f}" if p.billed_usd is not None else ""
    head = "plan" if p.changed else "recorded markers"
    how = "the plan applied to the requests, simulated again" if p.changed else "no plan bills less"
    return [
        f"provider {p.provider} · model {p.model} · {p.sessions} session(s) · {p.requests}"
        " recorded request(s)",
        f"before  recorded markers  ${p.recorded.usd:.4f}  hit ratio {p.recorded.hit:.1%}"
        f" (simulated{billed})",
        f"after   {head:<16}  ${p.plan.usd:.4f}  hit ratio {p.plan.hit:.1%} ({how})",
        saving_line(p.saving_per_session, p.saving_per_month(per_month), per_month),
        *(f"- {c}" for c in p.sentences),
        f"- {p.lifetime}",
        f"- {p.keep_alive}",
    ]


def plan_json(p: RecordedPlan, per_month: int) -> dict[str, Any]:
    return {
        "provider": p.provider,
        "model": p.model,
        "sessions": p.sessions,
        "requests": p.requests,
        "before": {"markers": "recorded", "usd": p.recorded.usd, "hit_ratio": p.recorded.hit},
        "after": {
            "markers": "plan" if p.changed else "recorded",
            "usd": p.plan.usd,
            "hit_ratio": p.plan.hit,
        },
        "billed_usd": p.billed_usd,
        "changed": p.changed,
        "plan": [
            {
                "block": m.rule.name,
                "rule": m.rule.meaning,
                "cache_control": {"type": "ephemeral", "ttl": m.ttl},
                "requests": m.requests,
                "example": m.example,
            }
            for m in p.marks
        ],
        "tried": [{"markers": name, "usd": usd} for name, usd in p.tried],
        "saving_per_session": p.saving_per_session,
        "saving_per_month": p.saving_per_month(per_month),
        "sessions_per_month": per_month,
        "changes": list(p.sentences),
        "lifetime": p.lifetime,
        "keep_alive": p.keep_alive,
    }


def _open_all(target: str) -> tuple[list[Session], list[Failure]]:
    """The sessions of a folder, zip or glob; one that cannot be read is listed, not fatal
    (as ``analyze`` and ``usage`` list theirs)."""
    from assembler.analysis.app import open_session, session_names
    from assembler.analysis.fleet import Failure

    sessions: list[Session] = []
    skipped: list[Failure] = []
    for name in session_names(target):
        try:
            sessions.append(open_session(name).session)
        except Exception as exc:  # one bad file must not stop the folder
            skipped.append(Failure(name, one_line(str(exc), 600) or type(exc).__name__))
    if not sessions:
        raise UsageError(f"{target}: no session could be read; {skipped[0].line()}")
    return sessions, skipped


def _print(args: argparse.Namespace, lines: list[str], out: dict[str, Any], skipped: list[Failure]) -> None:  # fmt: skip
    if args.json:
        out["could_not_read"] = [{"path": f.path, "error": f.message} for f in skipped]
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return
    if skipped:
        lines += ["", f"could not be read ({len(skipped)}):"]
        lines += [f"  {f.line()}" for f in skipped]
    print("\n".join(lines))


def _recorded(args: argparse.Namespace, sessions: list[Session], skipped: list[Failure]) -> int:
    from assembler.analysis.advice import recommend_recorded
    from assembler.analysis.bill import billed_usd

    if args.output:
        raise UsageError(
            f"{args.session}: -o: recorded requests get a marker plan, not a layout file"
            " (use --json to keep the plan)"
        )
    with provider_errors(args.session, args.provider, args.model):
        p = recommend_recorded(
            sessions, provider=args.provider, model=args.model, billed_of=billed_usd
        )
    per_month = args.sessions_per_month
    _print(args, plan_lines(p, per_month), plan_json(p, per_month), skipped)
    return 0


def cmd_recommend(args: argparse.Namespace) -> int:
    from assembler.analysis.advice import layout_text, only_recorded_sessions, recommend

    if args.sessions_per_month < 0:
        raise UsageError(
            f"{args.session}: --sessions-per-month: expected an integer ≥ 0,"
            f" found {args.sessions_per_month}"
        )
    check_provider_model(args.session, args.provider, args.model)
    inputs = [Path(args.session), args.layout]  # a layout file is an input too
    if args.output:
        output_target(args.output, "-o", inputs)  # a bad target refused before the search
    skipped: list[Failure] = []
    if is_batch_target(args.session):  # one agent's sessions, searched together
        sessions, skipped = _open_all(args.session)
    else:
        sessions = [open_input(args.session, "recommend")]
    if only_recorded_sessions(sessions):  # the client's markers are what can change
        return _recorded(args, sessions, skipped)
    layout = load_layout(args.layout)
    with provider_errors(args.session, args.provider, args.model):
        r = recommend(sessions, layout, provider=args.provider, model=args.model)
    if args.output:
        write_text(args.output, layout_text(r.recommended), "-o", inputs)
    per_month = args.sessions_per_month
    lines = recommendation_lines(r, per_month)
    if args.output:
        lines.append(f"layout written to {args.output}")
    _print(args, lines, recommendation_json(r, per_month), skipped)
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
