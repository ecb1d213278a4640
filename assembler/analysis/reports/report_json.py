"""An analysis as JSON: one object per step, the session's totals, measured checks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from assembler.analysis.engine import SessionAnalysis, StepAnalysis
from assembler.analysis.reports.indented_json import dumps_indented
from assembler.analysis.reports.report_json_steps import MISS_FIELDS, StepText
from assembler.analysis.reports.step_notes import warning_lines
from assembler.cache.rules import minimum_rule, rules, rules_version
from assembler.design.context import format_time
from assembler.sessions.model import Usage

# --- output shapes --------------------------------------------------------------------


DIAGNOSTIC_FIELDS = ("provider", "type", "reason", "missed_tokens", "ours", "agrees", "sentence")


def _fields(value: object | None, names: tuple[str, ...]) -> dict[str, Any] | None:
    """``value``'s attributes ``names`` as a JSON object, in that order; None for None."""
    return None if value is None else {name: getattr(value, name) for name in names}


def rules_json(a: SessionAnalysis) -> dict[str, Any]:
    """Per provider the analysis used: its rules version, and a warning for each model
    that fell back to a default rule (naming the rule)."""
    used: dict[str, set[str]] = {}
    for s in a.steps or ():
        used.setdefault(s.provider or a.provider, set()).add(s.model or a.model)
    if not used:
        used[a.provider] = {a.model}
    out: dict[str, Any] = {}
    for provider, models in sorted(used.items()):
        entry: dict[str, Any] = {"version": rules_version(provider)}
        prediction = rules()[provider].get("prediction")
        if prediction is not None:
            entry["prediction"] = prediction["value"]
        warnings = [w for m in sorted(models) if (w := minimum_rule(provider, m).warning)]
        entry["warnings"] = warnings
        out[provider] = entry
    return out


def _usage_json(u: Usage | None) -> dict[str, int] | None:
    if u is None:
        return None
    return {
        "input": u.input,
        "cache_read": u.cache_read,
        "cache_write": u.cache_write,
        "output": u.output,
        **({"cache_write_1h": u.cache_write_1h} if u.cache_write_1h else {}),
        **({"web_searches": u.web_searches} if u.web_searches else {}),  # billed per search
    }


def step_json(s: StepAnalysis) -> dict[str, Any]:
    return {
        "step": s.step,
        "label": s.label,
        "function": s.function,
        "call_path": list(s.call_path),
        "depth": s.depth,
        "timestamp": format_time(s.timestamp),
        "model": s.model,
        **({"platform": s.platform} if s.platform and s.platform != s.provider else {}),
        **({"write_ttl": s.write_ttl} if s.write_ttl else {}),
        # the tier, speed or batch the request was priced in, when not the standard one
        **({"priced_as": dict(s.price_context)} if s.price_context else {}),
        "tokens": dict(s.tokens),
        "cache": {
            "read": s.read,
            "write": s.write,
            "uncached": s.uncached,
            "hit_ratio": round(s.hit_ratio, 6),
            "cached_prefix_tokens": s.cached_prefix_tokens,
        },
        "miss": _fields(s.miss, MISS_FIELDS),
        "cost": {"usd": round(s.usd, 8), "usd_without_cache": round(s.usd_without_cache, 8)},
        "blocks": [
            {
                "name": b.name,
                "layer": b.layer,
                "section": b.section,
                "tokens": b.tokens,
                "cache": b.cache,
                "change": b.change,
                "breakpoint": b.breakpoint,
            }
            for b in s.blocks
        ],
        **_rare_fields(s),
    }


def _rare_fields(s: StepAnalysis) -> dict[str, Any]:
    """The last fields of :func:`step_json`, which most generated steps leave empty: the
    streamed writer spells the rest itself and asks for these alone."""
    return {
        "measured": _usage_json(s.measured),
        "provider_diagnostic": _fields(s.diagnostic, DIAGNOSTIC_FIELDS),
        # sizes of blocks the recorded request did not show, inferred from billed usage
        "inferred": [{"block": name, "tokens": n} for name, n in s.inferred],
        **({"warnings": list(s.warnings)} if s.warnings else {}),
    }


def _measured_checks(a: SessionAnalysis) -> dict[int, Any]:
    from assembler.analysis.bill import compare_measured  # imports this module

    return {c.step: c for c in compare_measured(a)}


def _measured_check_json(check: Any) -> dict[str, object]:
    from assembler.analysis.bill import measured_check_json  # imports this module

    return measured_check_json(check)


def _bills(a: SessionAnalysis, recorded: bool) -> dict[int, float | None]:
    """Each measured step's usage priced (the bill; None when no price is known for it),
    priced once for both the steps and the totals; none at another provider or model."""
    from assembler.analysis.bill import billed_cost
    from assembler.cache.prices.pricing import PricingError

    out: dict[int, float | None] = {}
    for s in a.steps if recorded else ():
        if s.measured is not None:
            try:
                out[s.step] = billed_cost(s)
            except PricingError:
                out[s.step] = None
    return out


def _with_bill(out: dict[str, Any], s: StepAnalysis, bills: dict[int, float | None]) -> dict[str, Any]:  # fmt: skip
    u = s.measured
    if u is not None:
        # the recorded keys (input, cache_read, cache_write, output) stay; the
        # simulator's terms are added beside them, and the bill at the recorded provider
        billed = bills.get(s.step)
        out["measured"] = {
            **(out["measured"] or {}),
            "read": u.cache_read,
            "write": u.cache_write,
            "uncached": u.input,
            "billed_usd": None if billed is None else round(billed, 8),
        }
    return out


def _step_out(s: StepAnalysis, checks: dict[int, Any], bills: dict[int, float | None]) -> dict[str, Any]:  # fmt: skip
    out = _with_bill(step_json(s), s, bills)
    check = checks.get(s.step)
    out["measured_check"] = _measured_check_json(check) if check is not None else None
    return out


def _billed_json(a: SessionAnalysis, checks: dict[int, Any]) -> dict[str, Any]:
    """The text report's "billed:" and "simulated:" lines, as numbers: the bill, the
    simulation of the same steps and its difference from the bill, the tokens read,
    written and uncached on both sides, how many steps read differently, the bill's tokens priced without caching, the first step that reads
    differently from the bill (null where none does)."""
    from assembler.analysis.bill import bill_first  # imports this module

    bill = bill_first(a, list(checks.values()))
    assert bill is not None  # called for an analysis with billed steps
    first = bill.divergence
    return {
        "usd": round(bill.billed, 8),
        "steps": bill.billed_steps,
        "simulated_usd": round(bill.simulated, 8),
        "difference": None if bill.difference is None else round(bill.difference, 6),
        "without_cache_usd": round(bill.billed_without_cache, 8),
        "tokens": {
            side: {"read": t.read, "write": t.write, "uncached": t.uncached}
            for side, t in (("billed", bill.sizes_billed), ("simulated", bill.sizes_simulated))
        },
        "diverging_steps": bill.diverging_steps,
        "first_divergent_step": None
        if first is None
        else {"step": first.step, **_measured_check_json(first)},
    }


def _totals(
    a: SessionAnalysis, bills: dict[int, float | None], checks: dict[int, Any]
) -> dict[str, Any]:
    totals: dict[str, Any] = dict(a.totals)
    totals["hit_ratio"] = round(totals["hit_ratio"], 6)
    totals["usd"] = round(totals["usd"], 8)
    totals["usd_without_cache"] = round(totals["usd_without_cache"], 8)
    measured = [s for s in a.steps if s.measured is not None]
    if measured:  # what the provider billed, over the steps that recorded it
        totals["measured_read"] = sum(s.measured.cache_read for s in measured if s.measured)
        totals["measured_write"] = sum(s.measured.cache_write for s in measured if s.measured)
        totals["measured_uncached"] = sum(s.measured.input for s in measured if s.measured)
        priced = [bills.get(s.step) for s in measured] if bills else []
        if priced and None not in priced:  # every billed step priced: the bill is whole
            totals["billed"] = _billed_json(a, checks)
    return totals


def _head(a: SessionAnalysis, scales: Mapping[str, float] | None) -> dict[str, Any]:
    return {
        "session": a.session,
        "layout": a.layout,
        "provider": a.provider,
        "model": a.model,
        "ttl": a.ttl,
        "approximate_tokens": a.approximate_tokens,
        # per model, the factor the counted sizes were scaled by to fit the bill (if any)
        **({"token_scale": dict(scales)} if scales else {}),
        "rules": rules_json(a),
    }


def analysis_json(
    a: SessionAnalysis, recorded: bool = True, scales: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """The JSON shape of ``analyze --json``. ``recorded``: analysed at the session's own
    provider and model; at another's, measured usage is not checked against the simulation
    (each step's ``measured_check`` is null), as the text report and the app do.
    ``scales``: the factors that scaled sizes to the bill (``size_scales``)."""
    checks = _measured_checks(a) if recorded else {}
    bills = _bills(a, recorded)
    return {
        **_head(a, scales),
        "steps": [_step_out(s, checks, bills) for s in a.steps],
        "totals": _totals(a, bills, checks),
    }


def write_analysis_json(
    a: SessionAnalysis,
    write: Callable[[str], object],
    recorded: bool = True,
    scales: Mapping[str, float] | None = None,
) -> None:
    """``json.dumps(analysis_json(a, recorded, scales), indent=2, ensure_ascii=False)``
    written a few steps at a time, so the whole document is never held in memory at once."""

    def member(value: object, depth: int) -> str:
        return dumps_indented(value, depth // 2)

    bills = _bills(a, recorded)
    checks = _measured_checks(a) if recorded and a.steps else {}
    write("{\n")
    for key, value in _head(a, scales).items():
        write(f"  {member(key, 2)}: {member(value, 2)},\n")
    if a.steps:

        def check(s: StepAnalysis) -> object:
            found = checks.get(s.step)
            return None if found is None else _measured_check_json(found)

        add = StepText(lambda s: _with_bill(_rare_fields(s), s, bills), check).add
        write('  "steps": [\n    ')
        pieces: list[str] = []
        starts: list[int] = []  # where each step's pieces begin
        for i, s in enumerate(a.steps):
            starts.append(len(pieces))
            if i:
                pieces.append(",\n    ")
            add(s, pieces)
            if i % _STEPS_PER_WRITE == _STEPS_PER_WRITE - 1:
                _write_steps(write, pieces, starts)
        _write_steps(write, pieces, starts)
        write("\n  ],\n")
    else:
        write('  "steps": [],\n')
    write(f'  "totals": {member(_totals(a, bills, checks), 2)}\n}}')


#: Steps joined into one write: fewer calls, and a bounded piece of text at a time.
_STEPS_PER_WRITE = 64


def _write_steps(write: Callable[[str], object], pieces: list[str], starts: list[int]) -> None:
    """The steps' ``pieces`` written, then cleared. Joined into one text if it is all
    ASCII; if not, one text per step, so that the few steps holding another character
    (a dash in a sentence) do not make the rest wide: checking and encoding a text of
    one-byte characters is a copy, one of wider characters a walk, several times slower.
    ae4a77f8's 10.6 MB report holds four dashes: written through the printable stream,
    54–59 → 45–51 ms."""
    text = "".join(pieces)
    if text.isascii():
        write(text)
    else:
        for begin, end in zip(starts, [*starts[1:], len(pieces)], strict=True):
            write("".join(pieces[begin:end]))
    pieces.clear()
    starts.clear()


def rules_lines(a: SessionAnalysis) -> list[str]:
    """The rules versions the analysis used, any model that fell back to a default, and
    what the simulators warned of per step (a request the provider would reject)."""
    used = rules_json(a)
    head = "rules: " + " · ".join(
        f"{p} {e['version']}" + (f" ({e['prediction']})" if "prediction" in e else "")
        for p, e in used.items()
    )
    return [
        head,
        *(f"warning: {w}" for e in used.values() for w in e["warnings"]),
        *warning_lines(a.steps),
    ]
