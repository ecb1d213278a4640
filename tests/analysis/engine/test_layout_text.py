"""A layout written out in full gives the same layout; unknown names get the nearest one."""

from __future__ import annotations

from importlib import resources

import pytest

from assembler.analysis.engine.layout_text import check_names, full_layout_text
from assembler.analysis.engine.layouts import (
    BUILTIN_LAYOUTS,
    Layout,
    LayoutError,
    builtin_layout,
    parse_layout_text,
)
from assembler.design.components import default_registry


def _own(name: str) -> str:
    return resources.files("assembler.data").joinpath("layouts", f"{name}.yaml").read_text("utf-8")


@pytest.mark.parametrize("name", BUILTIN_LAYOUTS)
def test_the_full_text_is_the_same_layout(name: str) -> None:
    layout = builtin_layout(name)
    full = full_layout_text(layout, _own(name))
    again = parse_layout_text(full, f"{name}.yaml")

    def shape(lay: Layout) -> list[tuple[object, ...]]:
        return [
            (c.name, c.layer, c.order, c.where, c.cacheable) for c in lay.apply(default_registry())
        ]

    assert shape(again) == shape(layout)
    assert again.breakpoints == layout.breakpoints and again.ttl == layout.ttl
    registry = layout.apply(default_registry())
    for c in registry:  # every component on its own line
        assert f"\n  {c.name}: {{layer: {c.layer.value}, order: {c.order}," in full
    assert "\nbreakpoints: [" in full


def test_an_unknown_component_gets_did_you_mean() -> None:
    layout = parse_layout_text("name: x\ncomponents:\n  curent_date: {layer: L0}\n", "mine.yaml")
    with pytest.raises(LayoutError) as err:
        check_names(layout)
    assert str(err.value) == (
        "mine.yaml: components.curent_date: no component of that name is registered; "
        "did you mean current_date?"
    )
