"""What-if layouts: the same session assembled another way.

A layout file (YAML) may move a component to another layer, order or
placement, disable one, add an alternative component, change ``expose`` /
``render_range`` (default or per function), give the call tree a token budget
(``tree_budget``: "compress only when over budget", §5), move the breakpoints
and change the cache lifetime, for all of them (``ttl``) or per breakpoint
(``{at: <anchor>, ttl: 1h}``, 1h ones ahead of 5m ones). Built-in layouts ship as files in ``assembler/layouts/``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from assembler.design.calltree import Expose, RenderRange, TreeOptions
from assembler.design.components.alternatives import ALTERNATIVES
from assembler.design.layers import Layer, Placement
from assembler.design.registry import RegistrationError, Registry
from assembler.design.wire import BREAKPOINT_ANCHORS, DEFAULT_BREAKPOINTS, MAX_BREAKPOINTS
from assembler.limits import ReadRefused, clip, one_line, read_capped
from assembler.sessions.model import SessionError
from assembler.sessions.reader import path_text, read_yaml

BUILTIN_LAYOUTS = (
    "seed",
    "seed-1h",
    "date-in-l0",
    "situation-first",
    "split-tree",
    "expose-full",
    "no-breakpoints",
    "computer-use",
    "tree-budget",
)
TTLS = ("5m", "1h")
MAX_LAYOUT_BYTES = 1024 * 1024  # a layout is a page of settings


class LayoutError(ValueError):
    """One line: ``file:line: field: message``, user values cut short."""

    def __init__(self, source: str, field: str, message: str, line: int | None = None) -> None:
        self.source, self.field, self.message, self.line = source, field, message, line
        where = source if line is None else f"{source}:{line}"
        super().__init__(one_line(f"{where}: {clip(str(field), 120)}: {message}", 600))


@dataclass(frozen=True)
class ComponentMove:
    layer: Layer | None = None
    order: int | None = None
    placement: Placement | None = None
    enabled: bool = True
    cacheable: bool | None = None


@dataclass(frozen=True)
class Layout:
    name: str
    description: str = ""
    source: str = "<layout>"
    components: Mapping[str, ComponentMove] = field(default_factory=dict)
    add: tuple[str, ...] = ()
    default_expose: Expose | None = None
    expose: Mapping[str, Expose] = field(default_factory=dict)
    default_range: RenderRange | None = None
    render_range: Mapping[str, RenderRange] = field(default_factory=dict)
    breakpoints: tuple[str, ...] = DEFAULT_BREAKPOINTS
    ttl: str | None = None
    breakpoint_ttl: Mapping[str, str] = field(default_factory=dict)  # anchor → its own lifetime
    tree_budget: int | None = None

    def apply(self, registry: Registry) -> Registry:
        """A copy of ``registry`` rearranged by this layout."""
        out = registry.copy()
        for i, name in enumerate(self.add):
            try:
                out.register(ALTERNATIVES[name])
            except RegistrationError as exc:  # a name the registry already holds
                raise LayoutError(self.source, f"add[{i}]", str(exc)) from None
        for name, move in self.components.items():
            if name not in out:
                raise LayoutError(
                    self.source, f"components.{name}", "no component of that name is registered"
                )
            if not move.enabled:
                out.unregister(name)
                continue
            changes: dict[str, object] = {}
            if move.layer is not None:
                changes["layer"] = move.layer
                if move.placement is None:
                    changes["placement"] = None
            if move.order is not None:
                changes["order"] = move.order
            if move.placement is not None:
                changes["placement"] = move.placement
            if move.cacheable is not None:
                changes["cacheable"] = move.cacheable
            try:
                out.replace(name, **changes)
            except RegistrationError as exc:
                raise LayoutError(self.source, f"components.{name}", str(exc)) from None
        return out

    def lifetimes(self, default: str) -> tuple[str, ...]:
        """Each breakpoint's lifetime in order: its own, else ``default``."""
        return tuple(self.breakpoint_ttl.get(anchor) or default for anchor in self.breakpoints)

    def tree_options(self, base: TreeOptions) -> TreeOptions:
        """The session's own expose/render_range declarations, overridden by this layout."""
        expose = dict(base.expose)
        expose.update(self.expose)
        ranges = dict(base.render_range)
        ranges.update(self.render_range)
        return TreeOptions(
            default_expose=self.default_expose or base.default_expose,
            expose=tuple(sorted(expose.items())),
            default_range=self.default_range or base.default_range,
            render_range=tuple(sorted(ranges.items())),
            budget=self.tree_budget if self.tree_budget is not None else base.budget,
        )


def _enum(cls: Any, value: Any, source: str, where: str) -> Any:
    try:
        return cls(value)
    except ValueError:
        allowed = ", ".join(m.value for m in cls)
        raise LayoutError(
            source, where, f"expected one of {allowed}, found {_shown(value)}"
        ) from None


def _range(raw: Any, source: str, where: str) -> RenderRange:
    if not isinstance(raw, dict) or set(raw) - {"callers", "subcalls"}:
        raise LayoutError(source, where, "expected a mapping with callers and/or subcalls")
    callers, subcalls = raw.get("callers"), raw.get("subcalls", -1)
    if callers is not None and (not isinstance(callers, int) or callers < 0):
        raise LayoutError(
            source, f"{where}.callers", f"expected null or an integer ≥ 0, found {_shown(callers)}"
        )
    if not isinstance(subcalls, int) or subcalls < -1:
        raise LayoutError(
            source, f"{where}.subcalls", f"expected an integer ≥ -1, found {_shown(subcalls)}"
        )
    return RenderRange(callers, subcalls)


def _shown(value: Any) -> str:
    """A user value in a message: its repr, cut short."""
    return clip(repr(value), 80)


def _functions(raw: Mapping[str, Any], source: str, where: str) -> Mapping[str, Any]:
    functions = raw.get("functions") or {}
    if not isinstance(functions, dict):
        raise LayoutError(
            source,
            f"{where}.functions",
            f"expected a mapping of function name to a setting, found {_shown(functions)}",
        )
    return functions


_KEYS = {
    "name",
    "description",
    "components",
    "add",
    "expose",
    "render_range",
    "tree_budget",
    "breakpoints",
    "ttl",
}


def _breakpoints(
    raw: list[Any], ttl: str | None, source: str
) -> tuple[tuple[str, ...], dict[str, str]]:
    """Anchors, and the lifetimes given per anchor. A breakpoint is an anchor or
    ``{at: <anchor>, ttl: 5m|1h}``; listed in wire order, no 5m one may come
    before a 1h one (the provider requires longer-lived entries first)."""
    anchors: list[str] = []
    seen: dict[str, int] = {}  # anchor → its index, for a repeated one
    own: dict[str, str] = {}
    shorter: tuple[int, str, bool] | None = None  # the first 5m breakpoint; its lifetime its own?
    for i, item in enumerate(raw):
        where = f"breakpoints[{i}]"
        anchor, life = item, None
        if isinstance(item, dict):
            extra = sorted(str(k) for k in item if k not in {"at", "ttl"})
            if extra or "at" not in item:
                raise LayoutError(
                    source, f"{where}.{extra[0]}" if extra else where, "expected at and ttl"
                )
            anchor, life = item["at"], item.get("ttl")
            if life not in TTLS:
                raise LayoutError(
                    source,
                    f"{where}.ttl",
                    f"expected one of {', '.join(TTLS)}, found {_shown(life)}",
                )
            where = f"{where}.at"
        if not isinstance(anchor, str) or not (
            anchor in BREAKPOINT_ANCHORS or anchor == "last" or anchor.startswith("after:")
        ):
            raise LayoutError(
                source,
                where,
                f"expected one of {', '.join(BREAKPOINT_ANCHORS)}, 'last' or 'after:<component>',"
                f" or a mapping with at and ttl, found {_shown(anchor)}",
            )
        if anchor in seen:
            raise LayoutError(
                source,
                where,
                f"{clip(anchor, 80)} is listed twice (also breakpoints[{seen[anchor]}]);"
                " expected each anchor at most once",
            )
        seen[anchor] = i
        anchors.append(anchor)
        if life is not None:
            own[anchor] = life
        effective = life or ttl or TTLS[0]
        if effective == "1h" and shorter is not None:
            field = f"breakpoints[{shorter[0] if shorter[2] or not life else i}].ttl"
            raise LayoutError(
                source,
                field,
                f"a 1h breakpoint ({anchor}) after a 5m one (breakpoints[{shorter[0]}],"
                f" {shorter[1]}); expected 1h breakpoints first, 5m ones after them",
            )
        if effective == "5m" and shorter is None:
            shorter = (i, anchor, life is not None)
    return tuple(anchors), own


def parse_layout(data: Any, source: str) -> Layout:
    if not isinstance(data, dict):
        raise LayoutError(source, "(document)", "expected a mapping")
    unknown = sorted(str(k) for k in data if k not in _KEYS)  # YAML keys may be numbers
    if unknown:
        raise LayoutError(
            source, unknown[0], f"unknown field; expected one of {', '.join(sorted(_KEYS))}"
        )
    name = data.get("name", Path(source).stem)
    if not isinstance(name, str) or not name:
        raise LayoutError(source, "name", f"expected a non-empty string, found {_shown(name)}")
    moves: dict[str, ComponentMove] = {}
    raw_components = data.get("components") or {}
    if not isinstance(raw_components, dict):
        raise LayoutError(source, "components", "expected a mapping of component name to changes")
    for comp, raw in raw_components.items():
        where = f"components.{comp}"
        if not isinstance(raw, dict):
            raise LayoutError(
                source,
                where,
                "expected a mapping with layer, order, placement, enabled or cacheable",
            )
        extra = sorted(
            str(k) for k in raw if k not in {"layer", "order", "placement", "enabled", "cacheable"}
        )
        if extra:
            raise LayoutError(
                source,
                f"{where}.{extra[0]}",
                "unknown field; expected layer, order, placement, enabled or cacheable",
            )
        order = raw.get("order")
        if order is not None and (not isinstance(order, int) or isinstance(order, bool)):
            raise LayoutError(
                source, f"{where}.order", f"expected an integer, found {_shown(order)}"
            )
        for flag in ("enabled", "cacheable"):
            if flag in raw and not isinstance(raw[flag], bool):
                raise LayoutError(
                    source, f"{where}.{flag}", f"expected true or false, found {_shown(raw[flag])}"
                )
        moves[str(comp)] = ComponentMove(
            layer=_enum(Layer, raw["layer"], source, f"{where}.layer") if "layer" in raw else None,
            order=order,
            placement=_enum(Placement, raw["placement"], source, f"{where}.placement")
            if "placement" in raw
            else None,
            enabled=raw.get("enabled", True),
            cacheable=raw.get("cacheable"),
        )
    add = data.get("add") or []
    if not isinstance(add, list) or any(
        not isinstance(a, str) or a not in ALTERNATIVES for a in add
    ):
        raise LayoutError(
            source,
            "add",
            f"expected a list drawn from {', '.join(ALTERNATIVES)}, found {_shown(add)}",
        )
    twice = next((i for i, a in enumerate(add) if a in add[:i]), None)
    if twice is not None:  # registering it again would fail when the layout is applied
        raise LayoutError(
            source, f"add[{twice}]", f"{add[twice]} is added twice; expected each name once"
        )
    default_expose = None
    expose: dict[str, Expose] = {}
    raw_expose = data.get("expose") or {}
    if not isinstance(raw_expose, dict):
        raise LayoutError(source, "expose", "expected a mapping with default and/or functions")
    if "default" in raw_expose:
        default_expose = _enum(Expose, raw_expose["default"], source, "expose.default")
    for fn, value in _functions(raw_expose, source, "expose").items():
        expose[str(fn)] = _enum(Expose, value, source, f"expose.functions.{fn}")
    default_range = None
    ranges: dict[str, RenderRange] = {}
    raw_range = data.get("render_range") or {}
    if not isinstance(raw_range, dict):
        raise LayoutError(
            source, "render_range", "expected a mapping with default and/or functions"
        )
    if "default" in raw_range:
        default_range = _range(raw_range["default"], source, "render_range.default")
    for fn, value in _functions(raw_range, source, "render_range").items():
        ranges[str(fn)] = _range(value, source, f"render_range.functions.{fn}")
    breakpoints = data.get("breakpoints", list(DEFAULT_BREAKPOINTS))
    if not isinstance(breakpoints, list):
        raise LayoutError(
            source, "breakpoints", f"expected a list of at most {MAX_BREAKPOINTS} anchors"
        )
    ttl = data.get("ttl")
    if ttl is not None and ttl not in TTLS:
        raise LayoutError(source, "ttl", f"expected one of {', '.join(TTLS)}, found {_shown(ttl)}")
    # each anchor first, so a wrong or repeated one is named rather than merely counted
    anchors, own = _breakpoints(breakpoints, ttl, source)
    if len(anchors) > MAX_BREAKPOINTS:
        raise LayoutError(
            source,
            "breakpoints",
            f"expected a list of at most {MAX_BREAKPOINTS} anchors, found {len(anchors)}",
        )
    budget = data.get("tree_budget")
    if budget is not None and (
        not isinstance(budget, int) or isinstance(budget, bool) or budget < 1
    ):
        raise LayoutError(
            source, "tree_budget", f"expected a positive number of tokens, found {_shown(budget)}"
        )
    description = data.get("description", "")
    if not isinstance(description, str):
        raise LayoutError(source, "description", f"expected text, found {_shown(description)}")
    return Layout(
        name=name,
        description=description,
        source=source,
        components=moves,
        add=tuple(add),
        default_expose=default_expose,
        expose=expose,
        default_range=default_range,
        render_range=ranges,
        breakpoints=anchors,
        ttl=ttl,
        breakpoint_ttl=own,
        tree_budget=budget,
    )


def parse_layout_text(text: str, source: str) -> Layout:
    """Read with the sessions' guarded reader (aliases bounded, keys plain and unique),
    then name the line of the field an error is about."""
    if not text.strip():
        return parse_layout(None, source)
    try:
        data, lines = read_yaml(text, source)
    except SessionError as exc:
        raise LayoutError(source, exc.field or "(document)", exc.message, exc.line) from None
    except RecursionError:
        raise LayoutError(source, "(document)", "values are nested too deeply to read") from None
    try:
        return parse_layout(data, source)
    except LayoutError as exc:
        raise LayoutError(source, exc.field, exc.message, _line_of(exc.field, lines)) from None


def _line_of(field: str, lines: Mapping[tuple[str | int, ...], int]) -> int | None:
    """The line of ``field`` (a dotted path as messages spell it), or of its nearest parent."""
    by_text = {path_text(path): line for path, line in lines.items()}
    while field:
        if field in by_text:
            return by_text[field]
        cut = max(field.rfind("."), field.rfind("["))
        field = field[:cut] if cut > 0 else ""
    return None


# A built-in layout is package data: read and checked once per process. Layouts are frozen.
@functools.cache
def builtin_layout(name: str) -> Layout:
    if name not in BUILTIN_LAYOUTS:
        raise LayoutError(
            name,
            "name",
            f"no built-in layout of that name; expected one of {', '.join(BUILTIN_LAYOUTS)}",
        )
    text = resources.files("assembler.data").joinpath("layouts", f"{name}.yaml").read_text("utf-8")
    return parse_layout_text(text, f"{name}.yaml")


def load_layout(name_or_path: str) -> Layout:
    """A built-in layout by name, or a layout file by path."""
    if name_or_path in BUILTIN_LAYOUTS:
        return builtin_layout(name_or_path)
    path = Path(name_or_path)
    if not path.exists():
        raise LayoutError(
            name_or_path,
            "layout",
            f"neither a built-in layout ({', '.join(BUILTIN_LAYOUTS)}) nor a readable file",
        )
    try:
        text = read_capped(path, MAX_LAYOUT_BYTES).decode("utf-8")
    except ReadRefused as exc:
        raise LayoutError(name_or_path, "layout", str(exc)) from None
    except UnicodeDecodeError as exc:
        raise LayoutError(name_or_path, "layout", f"not UTF-8 text (byte {exc.start})") from None
    return parse_layout_text(text.removeprefix("\ufeff"), name_or_path)


def all_builtin_layouts() -> Sequence[Layout]:
    return [builtin_layout(n) for n in BUILTIN_LAYOUTS]
