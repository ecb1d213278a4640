"""``python -m assembler rules``: the cache rules in force, with their sources and dates."""

from __future__ import annotations

import argparse
from typing import Any


def cmd_rules(args: argparse.Namespace) -> int:
    from assembler.cache.providers import PROVIDERS, normalize_provider
    from assembler.cache.rules_view import describe, version_of

    providers = [normalize_provider(args.provider)] if args.provider else list(PROVIDERS)
    lines: list[str] = []
    for provider in providers:
        if lines:
            lines.append("")
        which = f" for {args.model}" if args.model else ""
        lines.append(f"{provider} rules{which}, version {version_of(provider)}")
        for r in describe(provider, args.model):
            lines.append(f"  {r.name}: {r.value}")
            lines.append(f"    source: {r.source}")
            lines.append(f"    effective: {r.effective} · checked: {r.checked}")
            if r.warning:
                lines.append(f"    warning: {r.warning}")
    print("\n".join(lines))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("rules", help="print the cache rules in force, with sources and dates")
    p.add_argument("--provider", help="anthropic, openai, gemini or deepseek (default: all)")
    p.add_argument("--model", help="resolve per-model rules for this model")
    p.set_defaults(run=cmd_rules)
