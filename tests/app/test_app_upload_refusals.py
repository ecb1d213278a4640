"""AppTest: a session file is read whatever comments open it; a refused file says why in
one line, shows no success and leaves the kept upload in place; a session cached by
content never carries another browser session's file name."""

from __future__ import annotations

from app_helpers import ROOT, new_app
from streamlit.testing.v1 import AppTest

from ui.state import uploads

SAMPLES = ROOT / "sample_sessions"
FIX = ROOT / "tests" / "sessions" / "importers" / "fixtures"
UPLOAD = "Upload a file…"


def _open_uploader() -> AppTest:
    at = new_app()
    at.run()
    at.selectbox(key="w_sel_session").select(UPLOAD).run()
    return at


def _send(at: AppTest, name: str, raw: bytes) -> AppTest:
    # after each accepted upload the uploader has a new key (upload_session_<n>)
    (uploader,) = [u for u in at.file_uploader if str(u.key).startswith(uploads.UPLOADER)]
    uploader.set_value([(name, raw, "text/plain")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _errors(at: AppTest) -> list[str]:
    # the sidebar shows a message as a literal (no markdown): `` `text` ``
    return [str(e.value).strip("` ") for e in at.error]


def _kept(at: AppTest) -> str | None:
    if uploads.STATE not in at.session_state:
        return None
    return str(at.session_state[uploads.STATE].name)


def test_a_sample_that_opens_with_comments_is_accepted_and_shown() -> None:
    raw = (SAMPLES / "coding_agent_midnight.yaml").read_bytes()
    at = _send(_open_uploader(), "coding_agent_midnight.yaml", raw)
    assert _errors(at) == []
    assert _kept(at) == "coding_agent_midnight.yaml"
    assert at.subheader[0].value.startswith("Step 1 / ")


def test_a_commented_near_session_names_its_field() -> None:
    text = (SAMPLES / "review_agent_paths.yaml").read_text("utf-8")
    bad = text.replace("  provider: anthropic\n", "  provider: 42\n", 1)
    assert bad != text
    at = _send(_open_uploader(), "p42.yaml", bad.encode())
    (message,) = _errors(at)
    assert message.startswith("p42.yaml:")
    assert "session.provider: expected a string, found the integer 42" in message
    assert _kept(at) is None


def test_empty_and_non_utf8_files_say_what_was_expected() -> None:
    at = _send(_open_uploader(), "empty.yaml", b"")
    assert [m[:56] for m in _errors(at)] == [
        "empty.yaml: the file is empty; expected a session file ("
    ]
    at = _send(_open_uploader(), "latin.yaml", "format: café\n".encode("latin-1"))
    (message,) = _errors(at)
    assert message.startswith("latin.yaml: not UTF-8 text (byte 11)"), message


def test_a_refused_file_shows_no_success_and_keeps_the_previous_upload() -> None:
    at = _send(
        _open_uploader(), "midnight.yaml", (SAMPLES / "coding_agent_midnight.yaml").read_bytes()
    )
    assert _kept(at) == "midnight.yaml" and len(at.toast) == 1
    text = (SAMPLES / "review_agent_paths.yaml").read_text("utf-8")
    noevents = text[: text.index("\nevents:")] + "\nevents: []\n"
    at = _send(at, "noevents.yaml", noevents.encode())
    assert _errors(at) == [
        "noevents.yaml: events: the session has no LLM call; expected at least one event of type llm"
    ]
    assert [t.value for t in at.toast] == []
    assert _kept(at) == "midnight.yaml"
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert not any("noevents.yaml" in c for c in captions)
    assert any("**midnight.yaml** — session file" in c for c in captions)
    # the page and its link still show the kept upload
    assert at.subheader[0].value.startswith("Step 1 /")
    assert str(at.query_params.get("session", "")).startswith("upload:")


def test_a_session_cached_by_content_carries_no_other_browser_sessions_file_name() -> None:
    raw = (FIX / "claude_code" / "session.jsonl").read_bytes()
    first = _send(_open_uploader(), "secret-project-x.jsonl", raw)
    assert _errors(first) == []
    second = _send(_open_uploader(), "mine.jsonl", raw)  # same bytes, another browser session
    second.switch_page("pages/6_Recommend.py").run()
    notes = [*second.warning, *second.info]
    text = " ".join([*_errors(second), *(str(w.value) for w in notes)]).replace("\\", "")
    assert not second.exception and "secret-project-x" not in text
    assert "secret-project-x" not in str(second.main)
    assert "secret-project-x" not in str(second.sidebar)


def test_a_link_brings_back_its_own_upload_not_a_later_one_of_the_same_bytes() -> None:
    raw = (SAMPLES / "coding_agent_midnight.yaml").read_bytes()
    first = _send(_open_uploader(), "secret-project-x.yaml", raw)
    second = _send(_open_uploader(), "mine.yaml", raw)  # same bytes, another browser session
    links = [str(at.query_params["session"]) for at in (first, second)]
    assert links[0] != links[1]
    for link, name in zip(links, ("secret-project-x.yaml", "mine.yaml"), strict=True):
        reloaded = new_app(session=link)  # a reload is a new browser session
        reloaded.run()
        assert not reloaded.exception and not reloaded.error
        assert _kept(reloaded) == name
    # the link is not the content hash alone: having the bytes is not enough to open it
    assert uploads.restore(uploads.PREFIX + links[0].split(":")[1][: uploads.LINK_HASH]) is False
