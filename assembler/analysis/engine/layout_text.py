"""A layout written out in full, for editing: every component with its layer, order and
placement, the breakpoints and the lifetime — and unknown component names caught early,
with the nearest registered name offered.
"""

from __future__ import annotations

import difflib
from typing import Any

import yaml

from assembler.analysis.engine.layouts import Layout, LayoutError
from assembler.design.components import default_registry


def full_layout_text(layout: Layout, original: str = "") -> str:
    """YAML that gives the same layout, with every registered component spelled out.

    ``original`` (the layout's own text) keeps what this does not rewrite:
    ``add``, ``expose`` and ``render_range``.
    """
    base: dict[str, Any] = {}
    if original:
        loaded = yaml.safe_load(original)
        if isinstance(loaded, dict):
            base = loaded
    registry = layout.apply(default_registry())
    components: dict[str, dict[str, Any]] = {
        c.name: {
            "layer": c.layer.value,
            "order": c.order,
            "placement": c.where.value,
            "enabled": True,
        }
        for c in registry
    }
    for name, move in layout.components.items():
        if not move.enabled:
            components[name] = {"enabled": False}
    head: dict[str, Any] = {"name": layout.name}
    if layout.description:
        head["description"] = layout.description
    if base.get("add"):
        head["add"] = base["add"]
    tail: dict[str, Any] = {"ttl": layout.ttl} if layout.ttl else {}
    for key in ("expose", "render_range"):
        if base.get(key):
            tail[key] = base[key]
    # one component a line, in wire order, so reordering is moving a line and editing a number
    lines = [
        f"  {name}: "
        + yaml.safe_dump(fields, default_flow_style=True, sort_keys=False, width=1000).strip()
        for name, fields in components.items()
    ]
    anchors = yaml.safe_dump(list(layout.breakpoints), default_flow_style=True).strip()
    return (
        yaml.safe_dump(head, sort_keys=False, allow_unicode=True, width=100)
        + "components:\n"
        + "\n".join(lines)
        + f"\nbreakpoints: {anchors}\n"
        + ("" if layout.ttl else "# ttl: 5m or 1h (unset: the provider's default lifetime)\n")
        + (yaml.safe_dump(tail, sort_keys=False, allow_unicode=True, width=100) if tail else "")
    )


def check_names(layout: Layout) -> None:
    """Raise :class:`LayoutError` for a component no registry holds, naming the nearest one."""
    registry = default_registry()
    known = [c.name for c in registry]
    from assembler.design.components.alternatives import ALTERNATIVES

    known += [a for a in ALTERNATIVES if a in layout.add]
    for name in layout.components:
        if name in known:
            continue
        near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"; did you mean {near[0]}?" if near else ""
        raise LayoutError(
            layout.source, f"components.{name}", f"no component of that name is registered{hint}"
        )
