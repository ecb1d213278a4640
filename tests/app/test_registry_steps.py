"""AppTest: the Registry page steps through the session like the step view."""

from __future__ import annotations

from app_helpers import new_app


def test_registry_moves_between_steps() -> None:
    at = new_app(step="3")
    at.run()
    at.switch_page("pages/3_Registry.py")
    at.run()
    assert at.subheader[0].value == "Step 3 / 21"
    at.button(key="next").click().run()
    assert not at.exception
    assert at.subheader[0].value == "Step 4 / 21"
    assert at.query_params["step"] == "4"
    at.button(key="prev").click().run()
    assert at.subheader[0].value == "Step 3 / 21"
