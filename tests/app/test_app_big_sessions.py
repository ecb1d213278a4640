"""AppTest: a long session's timeline draws one chart at a time, thinned with extremes kept."""

from __future__ import annotations

import io
import json

from app_helpers import new_app

from assembler.analysis.app.downsample import MAX_POINTS
from assembler.sessions.generator import generate_session


def _jsonl(data: dict[str, object]) -> bytes:
    out = io.StringIO()
    out.write(json.dumps({"format": data["format"], "session": data["session"]}) + "\n")
    for event in data["events"]:  # type: ignore[attr-defined]
        out.write(json.dumps(event) + "\n")
    return out.getvalue().encode("utf-8")


def test_a_long_timeline_is_thinned_and_keeps_the_biggest_step() -> None:
    steps = MAX_POINTS + 400
    at = new_app()
    at.run()
    at.selectbox(key="w_sel_session").select("Upload a file…").run()
    at.file_uploader(key="upload_session").upload("long.jsonl", _jsonl(generate_session(steps, 3)))
    at.run()
    at.switch_page("pages/1_Timeline.py").run()
    assert not at.exception and not at.error
    charts = at.get("plotly_chart")
    assert len(charts) == 1  # one chart at a time
    spec = json.loads(charts[0].proto.spec)
    assert f"of {steps:,} steps: extremes kept" in spec["layout"]["title"]["text"]
    xs = spec["data"][0]["customdata"]
    if isinstance(xs, dict):  # plotly 7: numpy arrays as base64
        import base64

        import numpy as np

        xs = np.frombuffer(base64.b64decode(xs["bdata"]), dtype=xs["dtype"]).tolist()
    assert len(xs) < steps
    # the step with the biggest context is among the drawn points
    frame_totals = {}
    from assembler.analysis.engine.analyzer import analyze
    from assembler.analysis.engine.layouts import builtin_layout
    from assembler.sessions.loader import parse_bytes

    a = analyze(
        parse_bytes(_jsonl(generate_session(steps, 3)), "long.jsonl"), builtin_layout("seed")
    )
    frame_totals = {s.step: s.read + s.write + s.uncached for s in a.steps}
    biggest = max(frame_totals, key=frame_totals.__getitem__)
    assert biggest in {int(x) for x in xs}
    at.segmented_control(key="timeline_chart").set_value("Tokens by layer").run()
    assert (
        "Tokens per step, by layer"
        in json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"]
    )
