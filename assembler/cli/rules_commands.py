"""``python -m assembler rules``: the cache rules in force, with their sources and dates."""

from __future__ import annotations

import argparse
from typing import Any

from assembler.errors import UsageError


def _check_model(providers: list[str], model: str) -> None:
    """A model no provider prices would show every rule at its default, as if it were one.

    With ``--provider`` that provider must price it (as for ``analyze``); without, any of
    them, since every provider's rules are printed for it."""
    from assembler.cache.prices.pricing import PricingError, check_model

    errors: list[str] = []
    for provider in providers:
        try:
            check_model(provider, model)
            return
        except PricingError as exc:
            errors.append(str(exc))
    if len(errors) == 1:
        raise UsageError(f"--model: {errors[0]}")
    raise UsageError(
        f"--model: expected a model genai-prices prices for one of {', '.join(providers)},"
        f" found {model!r}"
    )


def cmd_rules(args: argparse.Namespace) -> int:
    from assembler.cache.providers import PROVIDERS, normalize_provider
    from assembler.cache.rules_view import describe, version_of

    try:
        providers = [normalize_provider(args.provider)] if args.provider else list(PROVIDERS)
    except UsageError as exc:
        raise UsageError(f"--provider: {exc}") from None
    if args.model:
        _check_model(providers, args.model)
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
    p.add_argument("--model", help="resolve per-model rules for this model (one with a price)")
    p.set_defaults(run=cmd_rules)
