"""The rules in force, as lines to print: each rule's value (resolved for a model), source and dates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assembler.cache.rules import minimum_rule, model_entry, rules, rules_version

_VALUE_KEYS = ("tokens", "value", "step", "idle")
_DETAIL_KEYS = (
    "runs_count_as_one",
    "first_response_after",
    "allowed",
    "implicit",
    "exact_match_only",
    "max_writes_per_request",
    "breakpoints_considered",
    "write_multiplier",
    "stored_at",
    "fixed_interval_tokens",
    "levels",
    "settings",
    "types",
    "reasons",
    "modes",
    "observed",
)


@dataclass(frozen=True)
class RuleView:
    provider: str
    name: str
    value: str
    source: str
    effective: str
    checked: str
    warning: str | None = None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value) or "none"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {_text(v)}" for k, v in value.items())
    return "null" if value is None else str(value)


def _entry_value(entry: Mapping[str, Any]) -> str:
    if "step" in entry:
        return f"step {entry['step']}, offset {entry['offset']}"
    if "idle" in entry:
        return f"idle {entry['idle']}, at most {entry['max_age']}"
    return _text(next(entry[k] for k in _VALUE_KEYS if k in entry))


def _value(provider: str, name: str, rule: Mapping[str, Any], model: str | None) -> str:
    parts: list[str] = []
    if "value" in rule:
        parts.append(_text(rule["value"]))
    if "models" in rule:
        entry = model_entry(rule["models"], model) if model else None
        if model and entry is not None:
            parts.append(f"{_entry_value(entry)} for {model} (match {_text(entry['match'])})")
        elif model:
            parts.append(
                f"{_entry_value({'value': rule['default']} if not isinstance(rule['default'], Mapping) else rule['default'])} for {model} (the default)"
            )
        else:
            default = rule["default"]
            shown = _entry_value(default) if isinstance(default, Mapping) else _text(default)
            per_model = "; ".join(f"{_text(e['match'])}: {_entry_value(e)}" for e in rule["models"])
            parts.append(f"default {shown}; {per_model}")
    elif "default" in rule:
        parts.append(f"default {_text(rule['default'])}")
    parts += [f"{k}: {_text(rule[k])}" for k in _DETAIL_KEYS if k in rule]
    return " · ".join(parts)


def describe(provider: str, model: str | None = None) -> list[RuleView]:
    """Every rule of ``provider``, resolved for ``model`` when given."""
    table = rules()[provider]
    out: list[RuleView] = []
    for name, rule in table.items():
        if name == "rules_version":
            continue
        warning = None
        if name in ("min_cacheable_tokens", "min_tokens") and model:
            warning = minimum_rule(provider, model).warning
        out.append(
            RuleView(
                provider,
                name,
                _value(provider, name, rule, model),
                " ".join(str(rule.get("source", "")).split()),
                _text(rule.get("effective")),
                _text(rule.get("checked")),
                warning,
            )
        )
    return out


def version_of(provider: str) -> str:
    return rules_version(provider)
