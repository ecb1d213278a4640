from __future__ import annotations

from datetime import UTC, datetime

import pytest

from assembler import (
    BlockStatus,
    ContextComponent,
    Layer,
    Placement,
    RegistrationError,
    Registry,
    assemble,
    build_wire,
    default_registry,
)
from assembler.design.context import Agent, Context, Profile

CTX = Context(
    profile=Profile(agent=Agent("t"), provider="anthropic", model="claude-sonnet-4-5"),
    now=datetime(2026, 6, 24, 12, 0, tzinfo=UTC),
)


def component(name: str, layer: str = "L0", order: int = 1, **kw: object) -> ContextComponent:
    return ContextComponent(
        name=name, layer=layer, order=order, build=kw.pop("build", lambda c: name), **kw
    )  # type: ignore[arg-type]


def test_duplicate_registration_names_the_component() -> None:
    reg = Registry()
    reg.register(component("alpha"))
    with pytest.raises(RegistrationError, match="'alpha' is already registered"):
        reg.register(component("alpha", order=2))


def test_unknown_layer_names_the_component() -> None:
    with pytest.raises(RegistrationError, match="component 'beta': unknown layer 'L3'"):
        Registry().register(component("beta", layer="L3"))


def test_placement_nothing_places_is_refused() -> None:
    with pytest.raises(RegistrationError, match="'gamma': a L2 component cannot land in system"):
        Registry().register(component("gamma", layer="L2", placement=Placement.SYSTEM))


def test_order_is_order_then_name() -> None:
    reg = Registry()
    for name, order in [("b", 5), ("a", 5), ("c", 1)]:
        reg.register(component(name, order=order))
    assert [c.name for c in reg.layer(Layer.L0)] == ["c", "a", "b"]


def test_raising_component_is_an_error_record_and_others_survive() -> None:
    def boom(ctx: Context) -> str:
        raise RuntimeError("index out of date")

    reg = Registry()
    reg.register(component("broken", build=boom))
    reg.register(component("fine", order=2))
    result = assemble(reg, CTX)
    broken = result.record("broken")
    assert broken.status is BlockStatus.ERROR
    assert broken.error == "RuntimeError: index out of date"
    assert result.record("fine").status is BlockStatus.EMITTED
    assert [b.name for b in build_wire(result).blocks] == ["fine"]


def test_every_registered_component_gets_one_record() -> None:
    reg = Registry()
    reg.register(component("on"))
    reg.register(component("off", condition=lambda c: False))
    reg.register(component("blank", build=lambda c: "  \n"))
    reg.register(component("none", build=lambda c: None))
    statuses = {r.name: r.status for r in assemble(reg, CTX).records}
    assert statuses == {
        "on": BlockStatus.EMITTED,
        "off": BlockStatus.CONDITION_FALSE,
        "blank": BlockStatus.EMPTY,
        "none": BlockStatus.EMPTY,
    }


def test_l2_component_reaches_the_current_user_message() -> None:
    reg = Registry()
    reg.register(component("sys", layer="L0"))
    reg.register(component("reminder", layer="L2", build=lambda c: "remember the deadline"))
    wire = build_wire(assemble(reg, CTX))
    block = wire.blocks[-1]
    assert (block.name, block.section) == ("reminder", "messages")
    assert wire.messages_text() == "remember the deadline"


def test_a_feature_registers_exactly_like_a_builtin() -> None:
    reg = default_registry()

    @reg.component("kanban_board", "L1", 30, condition_text="a board is attached")
    def kanban(ctx: Context) -> str:
        return "<kanban>3 cards in progress</kanban>"

    names = [c.name for c in reg.layer(Layer.L1)]
    assert names.index("kanban_board") == names.index("deferred_catalog") + 1
    assert assemble(reg, CTX).record("kanban_board").status is BlockStatus.EMITTED


def test_default_registry_is_a_fresh_instance() -> None:
    a, b = default_registry(), default_registry()
    a.unregister("identity")
    assert "identity" in b and "identity" not in a
    b.replace("tools", order=99)
    assemble(b, CTX)  # b's memo and sorted views filled
    c = default_registry()  # a copy of the built-ins, untouched by a and b
    assert "identity" in c and c.get("tools").order != 99
    assert not c.assembly_memo and not c.profile_records and list(c) != list(b)
