"""The cache rules file (``assembler/data/cache_rules.yaml``): per-provider, per-model minimums, increments and lifetimes."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from importlib import resources
from typing import Any

import yaml

from assembler.errors import UsageError

# --- rules ---------------------------------------------------------------------


@cache
def rules() -> dict[str, Any]:
    """The rules data file, parsed once."""
    text = resources.files("assembler.data").joinpath("cache_rules.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def parse_duration(text: str) -> timedelta:
    """``"5m"``, ``"1h"``, ``"30s"`` → timedelta."""
    m = re.fullmatch(r"(\d+)([smh])", str(text).strip())
    if not m:
        raise UsageError(f"expected a duration like 5m or 1h, found {text!r}")
    value, unit = int(m.group(1)), m.group(2)
    name = {"s": "seconds", "m": "minutes", "h": "hours"}[unit]
    return timedelta(**{name: value})


def by_model(entries: Sequence[Mapping[str, Any]], model: str, key: str, default: Any) -> Any:
    """The value of the longest ``match`` prefixing ``model``; ``default`` when none does."""
    m = model.lower()
    best: Mapping[str, Any] | None = None
    for entry in entries:
        match = str(entry["match"]).lower()
        if m.startswith(match) and (best is None or len(match) > len(str(best["match"]))):
            best = entry
    return default if best is None else best[key]


@cache
def anthropic_minimum(model: str) -> int:
    rule = rules()["anthropic"]["min_cacheable_tokens"]
    return int(by_model(rule["models"], model, "tokens", rule["default"]))


@cache
def gemini_minimum(model: str) -> int:
    rule = rules()["gemini"]["min_cacheable_tokens"]
    return int(by_model(rule["models"], model, "tokens", rule["default"]))


@cache
def openai_increment(model: str) -> int:
    rule = rules()["openai"]["increment"]
    return int(by_model(rule.get("models", []), model, "value", rule["default"]))


@dataclass(frozen=True)
class Retention:
    """How long an entry lives: ``idle`` after its last use, at most ``max_age`` after its write."""

    idle: timedelta
    max_age: timedelta

    @classmethod
    def fixed(cls, ttl: timedelta) -> Retention:
        return cls(ttl, timedelta.max)


@cache
def _default_retention(provider: str) -> Retention:
    return Retention.fixed(parse_duration(rules()[provider]["ttl"]["default"]))


@cache
def openai_retention(model: str) -> Retention:
    rule = rules()["openai"]["retention"]
    default = rule["default"]
    idle = by_model(rule["models"], model, "idle", default["idle"])
    max_age = by_model(rule["models"], model, "max_age", default["max_age"])
    return Retention(parse_duration(idle), parse_duration(max_age))
