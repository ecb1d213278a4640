"""A layout's breakpoints: a repeated or unknown anchor is named, before the count is checked."""

from __future__ import annotations

import pytest

from assembler.analysis.engine.layouts import LayoutError, parse_layout, parse_layout_text


@pytest.mark.parametrize(
    ("listed", "field", "again"),
    [
        ("[tools, history, history]", "breakpoints[2]", "breakpoints[1]"),
        ("[history, {at: history, ttl: 5m}]", "breakpoints[1].at", "breakpoints[0]"),
        ("['after:identity', tools, 'after:identity']", "breakpoints[2]", "breakpoints[0]"),
    ],
)
def test_an_anchor_listed_twice_is_named(listed: str, field: str, again: str) -> None:
    with pytest.raises(LayoutError) as err:
        parse_layout_text(f"name: twice\nbreakpoints: {listed}\n", "twice.yaml")
    assert err.value.field == field
    message = str(err.value)
    assert message.startswith(f"twice.yaml:2: {field}: ")
    assert f"is listed twice (also {again}); expected each anchor at most once" in message
    assert "\n" not in message


def test_an_unknown_anchor_is_named_before_the_count_is_checked() -> None:
    text = "name: five\nbreakpoints: [tools, 'system:L0', 'system:L1', history, nowhere]\n"
    with pytest.raises(LayoutError) as err:
        parse_layout_text(text, "five.yaml")
    assert err.value.field == "breakpoints[4]"
    assert str(err.value).startswith("five.yaml:2: breakpoints[4]: expected one of tools,")
    assert "found 'nowhere'" in str(err.value)


def test_five_known_anchors_are_counted() -> None:
    text = "name: five\nbreakpoints: [tools, 'system:L0', 'system:L1', history, last]\n"
    with pytest.raises(LayoutError) as err:
        parse_layout_text(text, "five.yaml")
    assert str(err.value) == (
        "five.yaml:2: breakpoints: expected a list of at most 4 anchors, found 5"
    )


def test_without_a_file_the_message_names_the_layout() -> None:
    with pytest.raises(LayoutError) as err:
        parse_layout({"breakpoints": ["history", "history"]}, "layout")
    assert str(err.value).startswith("layout: breakpoints[1]: history is listed twice")


def test_distinct_anchors_still_parse() -> None:
    layout = parse_layout_text("breakpoints: [tools, history, last]\n", "ok.yaml")
    assert layout.breakpoints == ("tools", "history", "last")


def test_each_breakpoint_has_its_own_lifetime_or_the_default() -> None:
    from assembler.analysis.engine.layouts import Layout

    layout = Layout(
        name="x",
        breakpoints=("tools", "after:call_tree"),
        breakpoint_ttl={"tools": "1h"},
    )
    assert layout.lifetimes("5m") == ("1h", "5m")
