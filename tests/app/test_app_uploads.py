"""AppTest: raw transcripts uploaded as they are, kept across pages and reloads, billed
cost beside simulated, and the provider's measured numbers beside the simulation per step."""

from __future__ import annotations

import json

import pytest
from app_helpers import PAGES, ROOT, new_app, uploaded
from streamlit.testing.v1 import AppTest

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.importing import import_file
from assembler.sessions.loader import parse_session

FIX = ROOT / "tests" / "sessions" / "importers" / "fixtures"
MAIN = FIX / "claude_code" / "session.jsonl"
AGENT = FIX / "claude_code" / "subagents" / "agent-a1b2c3.jsonl"
CODEX = FIX / "codex" / "rollout-2026-03-12T14-00-00-019a9776.jsonl"
UPLOAD = "Upload a file…"


def _upload(files: list[tuple[str, bytes]]) -> AppTest:
    at = uploaded(files)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _captions(at: AppTest) -> list[str]:
    return [c.value.replace("\\", "") for c in at.caption]


def _metric(at: AppTest, label: str) -> str:
    (m,) = [m for m in at.metric if m.label == label]
    return str(m.value)


def test_a_claude_code_transcript_with_a_subagent_is_imported_and_summarised() -> None:
    at = _upload([(MAIN.name, MAIN.read_bytes()), (AGENT.name, AGENT.read_bytes())])
    assert any(
        "**session.jsonl** — Claude Code transcript, 12 requests, 1 subagent, 1 compaction" in c
        for c in _captions(at)
    )
    assert at.subheader[0].value == "Step 1 / 12"
    # the URL names the upload by content hash, so a reload brings it back
    link = at.query_params["session"]
    assert isinstance(link, str) and link.startswith("upload:")


def test_billed_simulated_and_no_cache_cost_on_every_page() -> None:
    at = _upload([(MAIN.name, MAIN.read_bytes()), (AGENT.name, AGENT.read_bytes())])
    billed = _metric(at, "Billed, whole session")
    assert billed.startswith("$")
    for path in ("pages/1_Timeline.py", "pages/3_Registry.py"):
        at.switch_page(path).run()
        assert not at.exception and not at.error, path
        assert _metric(at, "Billed, whole session") == billed, path
        assert _metric(at, "Simulated, whole session").startswith("$"), path
        assert _metric(at, "Without caching, whole session").startswith("$"), path
    at.switch_page("pages/4_Savings.py").run()  # the bill first, in the page's own terms
    assert not at.exception and not at.error
    assert _metric(at, "Billed") == billed
    assert _metric(at, "Simulated").startswith("$")
    assert _metric(at, "Without caching").startswith("$")
    at.switch_page("pages/2_Compare_layouts.py").run()
    assert _metric(at, "Billed, whole session") == billed


def test_the_billed_cost_is_the_measured_usage_priced() -> None:
    from assembler.analysis.app.uploads import read_upload
    from assembler.analysis.engine.analyzer import analyze
    from assembler.analysis.engine.layouts import builtin_layout
    from assembler.cache.prices.pricing import price
    from assembler.sessions.loader import parse_bytes
    from ui.frame.billing import compute, money

    up = read_upload([(MAIN.name, MAIN.read_bytes()), (AGENT.name, AGENT.read_bytes())])
    a = analyze(parse_bytes(up.raw, up.name), builtin_layout("seed"))
    expected = 0.0
    for s in a.steps:
        assert s.measured is not None
        u = s.measured
        expected += price(
            s.provider,
            s.model,
            total_input=u.input + u.cache_read + u.cache_write,
            cache_read=u.cache_read,
            cache_write=u.cache_write,
            output=u.output,
        )
    c = compute(a, recorded_provider=True)
    assert c.billed is not None and abs(c.billed - expected) < 1e-9
    at = _upload([(MAIN.name, MAIN.read_bytes()), (AGENT.name, AGENT.read_bytes())])
    assert _metric(at, "Billed, whole session") == money(expected)


def test_measured_beside_simulated_per_step() -> None:
    at = _upload([(MAIN.name, MAIN.read_bytes()), (AGENT.name, AGENT.read_bytes())])
    from assembler.analysis.bill.measured import compare_measured

    at.query_params["step"] = "3"
    at.run()
    assert at.subheader[0].value == "Step 3 / 12"
    html = "".join(h.proto.body for h in at.get("html"))
    assert "Measured beside simulated" in "".join(m.value for m in at.markdown)
    assert "<th>measured</th>" in html and "<th>simulated</th>" in html
    # the numbers are the library's for this step
    from assembler.analysis.app.uploads import read_upload
    from assembler.analysis.engine.analyzer import analyze
    from assembler.analysis.engine.layouts import builtin_layout
    from assembler.sessions.loader import parse_bytes

    up = read_upload([(MAIN.name, MAIN.read_bytes()), (AGENT.name, AGENT.read_bytes())])
    c = {
        x.step: x
        for x in compare_measured(analyze(parse_bytes(up.raw, up.name), builtin_layout("seed")))
    }[3]
    assert f"<td>{c.measured.read:,}</td><td>{c.measured.write:,}</td>" in html
    assert any(c.sentence.split(":")[0] in cap for cap in _captions(at))


def test_a_codex_rollout_is_imported() -> None:
    at = _upload([(CODEX.name, CODEX.read_bytes())])
    assert any("Codex rollout, 5 requests, 1 compaction" in c for c in _captions(at))
    assert at.subheader[0].value == "Step 1 / 5"


def test_an_unrecognised_file_names_the_formats_and_the_command() -> None:
    at = new_app()
    at.run()
    at.selectbox(key="w_sel_session").select(UPLOAD).run()
    at.file_uploader(key="upload_session").upload("notes.jsonl", b'{"hello": 1}\n')
    at.run()
    assert not at.exception
    (error,) = [e.value.strip("` ") for e in at.error]  # shown as code, never as Markdown
    assert error.startswith("notes.jsonl: not a format the inspector reads")
    assert "python -m assembler import" in error


def test_the_upload_survives_page_switches_and_a_reload_by_its_link() -> None:
    at = _upload([(CODEX.name, CODEX.read_bytes())])
    link = at.query_params["session"]
    for path in PAGES[:4]:
        at.switch_page(path).run()
        assert not at.exception and not at.error, path
        assert any("Codex rollout, 5 requests" in c for c in _captions(at)), path
    at.switch_page("app.py").run()
    assert at.subheader[0].value.endswith("/ 5")
    # a reload is a new browser session: only the link is left
    fresh = new_app(session=str(link), step="2")
    fresh.run()
    assert not fresh.exception and not fresh.error
    assert fresh.subheader[0].value == "Step 2 / 5"
    assert any("Codex rollout, 5 requests" in c for c in _captions(fresh))


def test_a_link_to_an_upload_the_server_no_longer_keeps_says_so() -> None:
    at = new_app(session="upload:0123456789abcdef")
    at.run()
    assert not at.exception
    assert any("no longer keeps" in w.value for w in at.warning)


def test_the_providers_own_diagnostic_is_shown_beside_our_cause() -> None:
    log = FIX / "requests" / "diagnostics_anthropic.jsonl"
    at = _upload([(log.name, log.read_bytes())])
    data = import_file("requests", log)
    steps = analyze(parse_session(json.dumps(data), "log.json")).steps
    first = next(s for s in steps if s.diagnostic is not None)
    assert first.diagnostic is not None
    at.query_params["step"] = str(first.step)
    at.run()
    assert not at.exception
    captions = _captions(at)
    assert any(
        "provider" in c and first.diagnostic.sentence.split(":")[0] in c for c in captions
    ), captions


def test_a_file_over_the_limit_is_refused_in_one_line_before_it_is_read() -> None:
    from ui.state import data

    size = data.MAX_SESSION_MB * 1024 * 1024 + 1
    at = new_app()
    at.run()
    at.selectbox(key="w_sel_session").select(UPLOAD).run()
    at.file_uploader(key="upload_session").upload("big.jsonl", b" " * size)
    at.run()
    assert not at.exception
    (error,) = [e.value.strip("` ") for e in at.error]
    assert error == f"big.jsonl: the file is {size:,} bytes; the limit is {data.MAX_SESSION_MB} MB"


def test_the_server_and_the_uploader_have_one_limit() -> None:
    import tomllib

    from ui.state import data

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text("utf-8"))
    assert config["server"]["maxUploadSize"] == data.MAX_SESSION_MB
    # a generated 20,000-step session (33,121,182 bytes) opens
    assert data.MAX_SESSION_MB * 1024 * 1024 > 33_121_182


def test_kept_uploads_stay_within_the_byte_budget_the_newest_always(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ui.state import data, uploads

    monkeypatch.setattr(data, "CACHE_FILE_BYTES", 100)
    for i in range(3):
        uploads._keep(uploads.Kept(f"s{i}.jsonl", b"x" * 40, str(i) * 64, "small"))
    names = [k.name for k in uploads._store()["items"].values()]
    assert names == ["s1.jsonl", "s2.jsonl"]  # 120 bytes were over 100: the oldest went
    uploads._keep(uploads.Kept("big.jsonl", b"x" * 500, "f" * 64, "big"))
    assert [k.name for k in uploads._store()["items"].values()] == ["big.jsonl"]


def test_an_accepted_upload_leaves_an_empty_uploader_and_stays_loaded() -> None:
    at = _upload([(CODEX.name, CODEX.read_bytes())])
    (widget,) = at.get("file_uploader")
    assert widget.key == "upload_session_1" and not widget.value  # the file is not held twice
    at.button(key="next").click().run()
    assert at.subheader[0].value == "Step 2 / 5"
    assert any("Codex rollout, 5 requests" in c for c in _captions(at))
    # another file goes into the new uploader and replaces the first
    at.file_uploader(key="upload_session_1").upload(MAIN.name, MAIN.read_bytes())
    at.run()
    assert not at.exception and not at.error
    assert at.get("file_uploader")[0].key == "upload_session_2"
    assert any("Claude Code transcript" in c for c in _captions(at))


def test_a_step_priced_in_its_recorded_tier_says_so_on_its_cost() -> None:
    llm = "  - {{type: llm, at: '2026-11-02T10:0{m}:00Z', input: q, output: ok{s}}}\n"
    session = (
        "format: context-session/1\n"
        "session: {id: tiered, agent: {name: a}, provider: openai, model: gpt-4o}\n"
        "events:\n"
        "  - {type: enter, at: '2026-11-02T10:00:00Z', function: main}\n"
        + llm.format(m=1, s="")
        + llm.format(m=2, s=", settings: {service_tier: priority}")
        + "  - {type: exit, at: '2026-11-02T10:03:00Z', function: main}\n"
    )
    at = _upload([("tiered.yaml", session.encode())])

    def cost_help() -> str | None:
        (cost,) = [m for m in at.metric if m.label == "Cost of this step"]
        return cost.help

    assert not cost_help()  # step 1: the standard tier
    at.query_params["step"] = "2"
    at.run()
    assert at.subheader[0].value == "Step 2 / 2"
    help_text = cost_help()
    assert "service tier priority" in (help_text or "")
