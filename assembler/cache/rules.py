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


# libyaml's parser under the safe constructors, where built: the same data as
# yaml.safe_load in a tenth of the time (the first analysis of a process waits for it)
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def rules() -> dict[str, Any]:
    """The rules data file, parsed once."""
    text = resources.files("assembler.data").joinpath("cache_rules.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.load(text, Loader=_SafeLoader)
    return data


def rules_version(provider: str) -> str:
    """The version (the date last checked) of ``provider``'s rules."""
    return str(rules()[provider]["rules_version"]["value"])


def parse_duration(text: str) -> timedelta:
    """``"5m"``, ``"1h"``, ``"30s"`` → timedelta."""
    m = re.fullmatch(r"(\d+)([smh])", str(text).strip())
    if not m:
        raise UsageError(f"expected a duration like 5m or 1h, found {text!r}")
    value, unit = int(m.group(1)), m.group(2)
    name = {"s": "seconds", "m": "minutes", "h": "hours"}[unit]
    return timedelta(**{name: value})


_PLATFORM_PREFIX = re.compile(r"^(?:(?:us|eu|apac|global|regional)\.)?(?:anthropic\.)?")
_PLATFORM_SUFFIX = re.compile(r"(?:-v\d+:\d+|@\d{8})$")


@cache
def normalize_model(model: str) -> str:
    """The model name as the rules match it: lower case, without Bedrock/Vertex decorations."""
    m = _PLATFORM_PREFIX.sub("", model.strip().lower(), count=1)
    return _PLATFORM_SUFFIX.sub("", m)


def _matches(entry: Mapping[str, Any]) -> list[str]:
    match = entry["match"]
    return [str(x).lower() for x in (match if isinstance(match, list) else [match])]


def model_entry(entries: Sequence[Mapping[str, Any]], model: str) -> Mapping[str, Any] | None:
    """The entry whose longest ``match`` prefixes ``model``; None when none does."""
    m = normalize_model(model)
    best: Mapping[str, Any] | None = None
    length = -1
    for entry in entries:
        for match in _matches(entry):
            if m.startswith(match) and len(match) > length:
                best, length = entry, len(match)
    return best


def by_model(entries: Sequence[Mapping[str, Any]], model: str, key: str, default: Any) -> Any:
    """The value of the longest ``match`` prefixing ``model``; ``default`` when none does."""
    entry = model_entry(entries, model)
    return default if entry is None else entry[key]


@dataclass(frozen=True)
class MinimumRule:
    """A model's minimum cacheable prefix and the rule it came from."""

    tokens: int
    rule: str  # e.g. "anthropic.min_cacheable_tokens[claude-opus-4-7]"
    warning: str | None  # set when the model fell to the default


_MINIMUM_TABLES = {"anthropic": "min_cacheable_tokens", "gemini": "min_cacheable_tokens"}


@cache
def minimum_rule(provider: str, model: str) -> MinimumRule:
    table = _MINIMUM_TABLES.get(provider)
    if table is None:  # one value for every model
        key = "min_tokens"
        return MinimumRule(int(rules()[provider][key]["value"]), f"{provider}.{key}", None)
    rule = rules()[provider][table]
    entry = model_entry(rule["models"], model)
    if entry is not None:
        match = next(x for x in _matches(entry) if normalize_model(model).startswith(x))
        return MinimumRule(int(entry["tokens"]), f"{provider}.{table}[{match}]", None)
    default = int(rule["default"])
    name = f"{provider}.{table}.default"
    return MinimumRule(
        default,
        name,
        f"{model}: not listed in {provider}.{table}; used the default {default:,} ({name})",
    )


def anthropic_minimum(model: str) -> int:
    return minimum_rule("anthropic", model).tokens


def gemini_minimum(model: str) -> int:
    return minimum_rule("gemini", model).tokens


@cache
def generation(provider: str, model: str) -> str:
    """Which cache model a provider's model follows (e.g. OpenAI ``prefix`` or ``breakpoint``)."""
    rule = rules()[provider].get("generation")
    if rule is None:
        return "default"
    return str(by_model(rule["models"], model, "value", rule["default"]))


@cache
def openai_rounding(model: str) -> tuple[int, int]:
    """(step, offset): a read is ``offset + (matched - offset) // step * step``."""
    rule = rules()["openai"]["increment"]
    entry = model_entry(rule.get("models", []), model)
    chosen = rule["default"] if entry is None else entry
    return int(chosen["step"]), int(chosen["offset"])


def openai_increment(model: str) -> int:
    return openai_rounding(model)[0]


@cache
def invalidation_level(setting: str) -> str | None:
    """The first prefix level (tools, system, messages) a change of ``setting`` invalidates."""
    level = rules()["anthropic"]["invalidation"]["settings"].get(setting)
    return None if level is None else str(level)


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


_RETENTION_NAMES = {"in_memory": "in_memory", "in-memory": "in_memory", "24h": "24h", "30m": "30m"}


@cache
def openai_retention(model: str, requested: str | None = None) -> Retention:
    """The model's retention, or the one a request recorded (``in_memory``, ``24h``, ``30m``)."""
    rule = rules()["openai"]["retention"]
    mode = _RETENTION_NAMES.get(requested or "")
    if mode is not None:
        chosen = rule["modes"][mode]
        return Retention(parse_duration(chosen["idle"]), parse_duration(chosen["max_age"]))
    default = rule["default"]
    idle = by_model(rule["models"], model, "idle", default["idle"])
    max_age = by_model(rule["models"], model, "max_age", default["max_age"])
    return Retention(parse_duration(idle), parse_duration(max_age))
