"""Round three: hostile values in the importers' inputs, written at test time.

Each case is a fixture of one importer's format with one value made hostile (a text
past the loader's cap, a count past 2**53 or of the wrong type, a time at the
calendar's ends, a URL that does not parse, a status code of 5,000 digits, OTel
attributes of the wrong shape), a zip whose members are encrypted, corrupt, nested
or escape their folder, or a long transcript. ``Case.expect`` holds what the one
line must say (the line number and the field where there is one).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from build import CLAUDE, CODEX, IMPORTER_FIXTURES, REQUESTS, Case, _ok
from long_transcripts import claude_code, codex, otel_spans, request_log

OTEL = IMPORTER_FIXTURES / "otel" / "genai.json"
OPENINFERENCE = IMPORTER_FIXTURES / "otel" / "openinference.json"
CAPTURE = IMPORTER_FIXTURES / "capture" / "proxy_bodies.jsonl"
BIG = "9" * 5000
OVER_CAP = 4 * 1024 * 1024 + 100  # characters: just past the loader's text cap
TOOL_RESULT = 5_000_000  # the 5 MB tool result
EXIT_WARNED = 0  # imported, with a warning line saying what was kept within a limit

Edit = Callable[[list[dict[str, Any]]], None]


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _edited(fixture: Path, edit: Edit, name: str = "t.jsonl") -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        records = _records(fixture)
        edit(records)
        (tmp / name).write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")

    return write


def _raw(name: str, body: Callable[[], str | bytes]) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        value = body()
        data = value.encode("utf-8") if isinstance(value, str) else value
        (tmp / name).write_bytes(data)

    return write


def _first(records: list[dict[str, Any]], test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return next(r for r in records if test(r))


def _line_of(records: list[dict[str, Any]], record: dict[str, Any]) -> str:
    return f":{records.index(record) + 1}:"


# --- Claude Code ----------------------------------------------------------------------


def _assistant(records: list[dict[str, Any]]) -> dict[str, Any]:
    return _first(records, lambda r: r.get("type") == "assistant" and "usage" in r["message"])


def _claude_usage(key: str, value: Any) -> Edit:
    def edit(records: list[dict[str, Any]]) -> None:
        _assistant(records)["message"]["usage"][key] = value

    return edit


def _claude_time(value: str) -> Edit:
    def edit(records: list[dict[str, Any]]) -> None:
        _first(records, lambda r: r.get("type") == "user")["timestamp"] = value

    return edit


def _claude_tool_result(records: list[dict[str, Any]]) -> None:
    def is_result(r: dict[str, Any]) -> bool:
        content = r.get("message", {}).get("content")
        return isinstance(content, list) and content[0].get("type") == "tool_result"

    _first(records, is_result)["message"]["content"][0]["content"] = "r" * TOOL_RESULT


def _claude_prompt(records: list[dict[str, Any]]) -> None:
    _first(records, lambda r: r.get("type") == "user")["message"]["content"] = "p" * OVER_CAP


def _claude_title(records: list[dict[str, Any]]) -> None:
    _first(records, lambda r: r.get("type") == "summary")["summary"] = "t" * OVER_CAP


# the first assistant record is line 4, the first user record line 3 (the fixture's order)
CLAUDE_IMPORT = ("import", "claude-code", "{tmp}/t.jsonl", "-o", "{tmp}/o.jsonl")
CODEX_IMPORT = ("import", "codex", "{tmp}/t.jsonl", "-o", "{tmp}/o.jsonl")
REQUESTS_IMPORT = ("import", "requests", "{tmp}/t.jsonl", "-o", "{tmp}/o.jsonl")
OTEL_IMPORT = ("import", "otel", "{tmp}/t.json", "-o", "{tmp}/o.jsonl")
USAGE = "message.usage.input_tokens"

CLAUDE_CASES = (
    Case(
        "claude-tool-result-5mb",
        CLAUDE_IMPORT,
        ("characters",),
        exit=EXIT_WARNED,
        write=_edited(CLAUDE, _claude_tool_result),
    ),
    Case(
        "claude-prompt-over-cap",
        CLAUDE_IMPORT,
        ("characters",),
        exit=EXIT_WARNED,
        write=_edited(CLAUDE, _claude_prompt),
    ),
    Case(
        "claude-title-over-cap",
        CLAUDE_IMPORT,
        ("characters",),
        exit=EXIT_WARNED,
        write=_edited(CLAUDE, _claude_title),
    ),
    Case(
        "claude-usage-2-53",
        CLAUDE_IMPORT,
        (":4:", USAGE, "9,007,199,254,740,991"),
        write=_edited(CLAUDE, _claude_usage("input_tokens", 2**53)),
    ),
    Case(
        "claude-usage-float",
        CLAUDE_IMPORT,
        (":4:", USAGE, "a whole number"),
        write=_edited(CLAUDE, _claude_usage("input_tokens", 12.5)),
    ),
    Case(
        "claude-usage-string",
        CLAUDE_IMPORT,
        (":4:", USAGE, "a string"),
        write=_edited(CLAUDE, _claude_usage("input_tokens", "12")),
    ),
    Case(
        "claude-usage-negative",
        CLAUDE_IMPORT,
        (":4:", USAGE),
        write=_edited(CLAUDE, _claude_usage("input_tokens", -5)),
    ),
    Case(
        "claude-usage-object",
        CLAUDE_IMPORT,
        (":4:", "message.usage.cache_read_input_tokens", "an object"),
        write=_edited(CLAUDE, _claude_usage("cache_read_input_tokens", {"n": 1})),
    ),
    Case(
        "claude-usage-null",  # a count written as null is a count not given
        CLAUDE_IMPORT,
        (),
        exit=0,
        write=_edited(CLAUDE, _claude_usage("cache_read_input_tokens", None)),
    ),
    Case(
        "claude-usage-split-2-53",
        CLAUDE_IMPORT,
        (":4:", "message.usage.cache_creation.ephemeral_1h_input_tokens"),
        write=_edited(
            CLAUDE,
            lambda rs: _assistant(rs)["message"]["usage"]["cache_creation"].update(
                ephemeral_1h_input_tokens=2**60
            ),
        ),
    ),
    Case(
        "claude-time-year-1",
        CLAUDE_IMPORT,
        (":3:", "timestamp", "years 2 and 9998"),
        write=_edited(CLAUDE, _claude_time("0001-01-01T00:00:00Z")),
    ),
    Case(
        "claude-time-year-9999",
        CLAUDE_IMPORT,
        (":3:", "timestamp", "years 2 and 9998"),
        write=_edited(CLAUDE, _claude_time("9999-12-31T23:59:59Z")),
    ),
    Case(
        "claude-output-device",
        ("import", "claude-code", str(CLAUDE), "-o", "/dev/full"),
        ("device",),
        names_file=False,
    ),
)

# --- Codex ----------------------------------------------------------------------------


def _codex_usage(key: str, value: Any) -> Edit:
    def edit(records: list[dict[str, Any]]) -> None:
        counts = _first(
            records,
            lambda r: r["type"] == "event_msg" and r["payload"].get("type") == "token_count",
        )
        counts["payload"]["info"]["last_token_usage"][key] = value

    return edit


def _codex_time(records: list[dict[str, Any]]) -> None:
    _first(records, lambda r: r["type"] == "response_item")["timestamp"] = "0001-01-01T00:00:00Z"


def _codex_output(records: list[dict[str, Any]]) -> None:
    item = _first(
        records,
        lambda r: r["type"] == "response_item" and r["payload"]["type"] == "function_call_output",
    )
    item["payload"]["output"] = "o" * TOOL_RESULT


LAST_USAGE = "payload.info.last_token_usage"
CODEX_CASES = (
    Case(
        "codex-usage-2-53",
        CODEX_IMPORT,
        (":9:", f"{LAST_USAGE}.input_tokens"),
        write=_edited(CODEX, _codex_usage("input_tokens", 2**60)),
    ),
    Case(
        "codex-usage-float",
        CODEX_IMPORT,
        (":9:", f"{LAST_USAGE}.cached_input_tokens"),
        write=_edited(CODEX, _codex_usage("cached_input_tokens", 0.5)),
    ),
    Case(
        "codex-usage-string",
        CODEX_IMPORT,
        (":9:", f"{LAST_USAGE}.output_tokens"),
        write=_edited(CODEX, _codex_usage("output_tokens", "lots")),
    ),
    Case(
        "codex-time-year-1",
        CODEX_IMPORT,
        (":2:", "timestamp", "years 2 and 9998"),
        write=_edited(CODEX, _codex_time),
    ),
    Case(
        "codex-output-5mb",
        CODEX_IMPORT,
        ("characters",),
        exit=EXIT_WARNED,
        write=_edited(CODEX, _codex_output),
    ),
)

# --- request logs ---------------------------------------------------------------------


def _line(n: int, **changes: Any) -> Edit:
    def edit(records: list[dict[str, Any]]) -> None:
        records[n - 1].update(changes)

    return edit


def _request_usage(key: str, value: Any) -> Edit:
    def edit(records: list[dict[str, Any]]) -> None:
        records[0]["response"]["usage"][key] = value

    return edit


def _capture_status(value: Any) -> Edit:
    def edit(records: list[dict[str, Any]]) -> None:
        records[0]["response"]["status_code"] = value

    return edit


def _capture_url(value: Any) -> Edit:
    def edit(records: list[dict[str, Any]]) -> None:
        records[0]["request"]["url"] = value

    return edit


REQUEST_CASES = (
    Case(
        "requests-url-ipv6",
        REQUESTS_IMPORT,
        (":1:", "url"),
        write=_edited(REQUESTS, _line(1, url="http://[::1/v1/messages")),
    ),
    Case(
        "requests-url-huge",
        REQUESTS_IMPORT,
        (":1:", "url", "characters"),
        write=_edited(REQUESTS, _line(1, url="https://api.anthropic.com/" + "a" * 100_000)),
    ),
    Case(
        "requests-url-object",
        REQUESTS_IMPORT,
        (":1:", "url", "an object"),
        write=_edited(REQUESTS, _line(1, url={"host": "x"})),
    ),
    Case(
        "requests-status-digits",
        REQUESTS_IMPORT,
        (":1:", "status", "100 to 599"),
        write=_edited(REQUESTS, _line(1, status=BIG)),
    ),
    Case(
        "requests-status-float",
        REQUESTS_IMPORT,
        (":1:", "status", "100 to 599"),
        write=_edited(REQUESTS, _line(1, status=1e300)),
    ),
    Case(
        "requests-status-negative",
        REQUESTS_IMPORT,
        (":1:", "status_code", "100 to 599"),
        write=_edited(REQUESTS, _line(1, status_code=-1)),
    ),
    Case(
        "capture-status-digits",
        REQUESTS_IMPORT,
        (":1:", "response.status_code", "100 to 599"),
        write=_edited(CAPTURE, _capture_status(BIG)),
    ),
    Case(
        "capture-url-ipv6",
        REQUESTS_IMPORT,
        (":1:", "request.url"),
        write=_edited(CAPTURE, _capture_url("https://[api.anthropic.com/v1/messages")),
    ),
    Case(
        "requests-usage-2-53",
        REQUESTS_IMPORT,
        (":1:", "response.usage.input_tokens"),
        write=_edited(REQUESTS, _request_usage("input_tokens", 2**53)),
    ),
    Case(
        "requests-usage-float",
        REQUESTS_IMPORT,
        (":1:", "response.usage.output_tokens"),
        write=_edited(REQUESTS, _request_usage("output_tokens", 1e30)),
    ),
    Case(
        "requests-time-year-1",
        REQUESTS_IMPORT,
        (":1:", "timestamp", "years 2 and 9998"),
        write=_edited(REQUESTS, _line(1, timestamp="0001-01-01T00:00:00+01:00")),
    ),
    Case(
        "requests-time-epoch-huge",
        REQUESTS_IMPORT,
        (":5:", "time"),
        write=_edited(REQUESTS, _line(5, time=1e300)),
    ),
    Case(
        "requests-previous-id-huge",
        REQUESTS_IMPORT,
        (":2:", "request.previous_response_id", "characters"),
        write=_raw(
            "t.jsonl", lambda: request_log(3).replace('"resp_000000"}', f'"{"r" * 100_000}"}}', 1)
        ),
    ),
    Case(
        "requests-previous-id-number",
        REQUESTS_IMPORT,
        (":2:", "request.previous_response_id", "a number"),
        write=_raw("t.jsonl", lambda: request_log(3).replace('"resp_000000"}', "7}", 1)),
    ),
    Case(
        "capture-usage-in-body-text",
        REQUESTS_IMPORT,
        (":1:", "response.usage.input_tokens"),
        write=_edited(
            CAPTURE,
            lambda rs: rs[0]["response"].update(
                body=rs[0]["response"]["body"].replace(
                    '"input_tokens": 0', '"input_tokens": "0"', 1
                )
            ),
        ),
    ),
    Case(
        "requests-chain-1000",
        REQUESTS_IMPORT,
        (),
        exit=0,
        write=_raw("t.jsonl", lambda: request_log(1000)),
    ),
)

# --- OTel -----------------------------------------------------------------------------


def _otel(edit: Callable[[dict[str, Any]], None], fixture: Path = OTEL) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        doc = json.JSONDecoder().raw_decode(fixture.read_text("utf-8"))[0]  # the first export
        edit(doc)
        (tmp / "t.json").write_text(json.dumps(doc), "utf-8")

    return write


def _span(doc: dict[str, Any]) -> dict[str, Any]:
    span: dict[str, Any] = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    return span


def _add_attr(key: Any, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: _span(doc)["attributes"].append({"key": key, "value": value})


def _set_attr(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        for a in _span(doc)["attributes"]:
            if a["key"] == key:
                a["value"] = value

    return edit


OTEL_CASES = (
    Case(
        "otel-key-object",
        OTEL_IMPORT,
        (":1:", "key", "an object"),
        write=_otel(_add_attr({"a": 1}, {"stringValue": "x"})),
    ),
    Case(
        "otel-key-list",
        OTEL_IMPORT,
        (":1:", "key", "a list"),
        write=_otel(_add_attr(["a"], {"stringValue": "x"})),
    ),
    Case(
        "otel-model-list",
        OTEL_IMPORT,
        (":1:", "gen_ai.request.model"),
        write=_otel(
            _set_attr("gen_ai.request.model", {"arrayValue": {"values": [{"stringValue": "m"}]}})
        ),
    ),
    Case(
        "otel-model-kvlist",
        OTEL_IMPORT,
        (":1:", "gen_ai.request.model"),
        write=_otel(_set_attr("gen_ai.request.model", {"kvlistValue": {"values": []}})),
    ),
    Case(
        "otel-usage-object",
        OTEL_IMPORT,
        (":1:", "gen_ai.usage.input_tokens"),
        write=_otel(_set_attr("gen_ai.usage.input_tokens", {"stringValue": "lots"})),
    ),
    Case(
        "otel-usage-2-53",
        OTEL_IMPORT,
        (":1:", "gen_ai.usage.input_tokens", "9,007,199,254,740,991"),
        write=_otel(_set_attr("gen_ai.usage.input_tokens", {"intValue": str(2**60)})),
    ),
    Case(
        "otel-usage-digits",
        OTEL_IMPORT,
        (":1:", "gen_ai.usage.input_tokens"),
        write=_otel(_set_attr("gen_ai.usage.input_tokens", {"intValue": BIG})),
    ),
    Case(
        "otel-index-digits",
        OTEL_IMPORT,
        (":1:", "index has 900 digits"),
        write=_otel(
            _add_attr(f"llm.input_messages.{BIG[:900]}.message.content", {"stringValue": "x"}),
            OPENINFERENCE,
        ),
    ),
    Case(
        "otel-messages-object",
        OTEL_IMPORT,
        (":1:", "gen_ai.input.messages"),
        write=_otel(_set_attr("gen_ai.input.messages", {"kvlistValue": {"values": []}})),
    ),
    Case(
        "otel-time-year-1",
        OTEL_IMPORT,
        (":1:", "startTimeUnixNano"),
        write=_otel(lambda doc: _span(doc).update(startTimeUnixNano="-62135596800000000000")),
    ),
    Case(
        "otel-time-huge",
        OTEL_IMPORT,
        (":1:", "startTimeUnixNano"),
        write=_otel(lambda doc: _span(doc).update(startTimeUnixNano=BIG)),
    ),
    Case(
        "otel-conversation-id-huge",
        OTEL_IMPORT,
        (":1:", "gen_ai.conversation.id", "characters"),
        write=_otel(_set_attr("gen_ai.conversation.id", {"stringValue": "c" * 100_000})),
    ),
)

# --- zips -----------------------------------------------------------------------------


def _zip(members: dict[str, bytes], encrypted: bool = False) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, raw in members.items():
            z.writestr(name, raw)
    data = buffer.getvalue()
    return _mark_encrypted(data) if encrypted else data


def _mark_encrypted(data: bytes) -> bytes:
    """Every member flagged "encrypted" (bit 0 of its flags, in its local and central
    headers): what a reader sees of a password-protected zip."""
    out = bytearray(data)
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = out.find(signature)
        while at >= 0:
            out[at + flags_at] |= 1
            at = out.find(signature, at + 4)
    return bytes(out)


def _corrupt(data: bytes) -> bytes:
    """The first member's compressed bytes changed: its CRC no longer matches."""
    out = bytearray(data)
    at = out.find(b"PK\x03\x04") + 30 + int.from_bytes(out[26:28], "little")
    for i in range(at, at + 40):
        out[i] ^= 0x55
    return bytes(out)


def _zip_case(name: str, body: Callable[[], bytes], expect: tuple[str, ...]) -> Case:
    return Case(name, ("analyze", "{tmp}/t.zip"), expect, write=_raw("t.zip", body))


def _claude() -> bytes:
    return CLAUDE.read_bytes()


ZIP_CASES = (
    _zip_case(
        "zip-encrypted",
        lambda: _zip({"s.jsonl": _claude()}, encrypted=True),
        ("s.jsonl", "encrypted"),
    ),
    _zip_case("zip-corrupt", lambda: _corrupt(_zip({"s.jsonl": _claude()})), ("s.jsonl",)),
    _zip_case(
        "zip-nested",
        lambda: _zip({"inner.zip": _zip({"s.jsonl": _claude()})}),
        ("inner.zip", "zip inside"),
    ),
    _zip_case(
        "zip-escaping",
        lambda: _zip({"../../s.jsonl": _claude()}),
        ("../../s.jsonl", "outside"),
    ),
    _zip_case(
        "zip-absolute",
        lambda: _zip({"/etc/s.jsonl": _claude()}),
        ("/etc/s.jsonl", "outside"),
    ),
    _zip_case(
        "zip-many-entries",
        lambda: _zip({f"d/{i}.txt": b"" for i in range(20_000)} | {"s.jsonl": _claude()}),
        ("entries",),
    ),
)

# --- layouts --------------------------------------------------------------------------


def _layout_twice(tmp: Path) -> None:
    _ok(tmp)
    (tmp / "l.yaml").write_text("name: twice\nadd: [call_io, call_io]\n", "utf-8")


LAYOUT_CASES = (
    Case(
        "layout-add-twice",
        ("analyze", "{tmp}/ok.json", "--layout", "{tmp}/l.yaml"),
        ("add[1]", "twice"),
        write=_layout_twice,
    ),
)

# --- long transcripts: time and memory linear in the input ----------------------------

LONG_CASES = (
    Case(
        "otel-4000-spans",
        OTEL_IMPORT,
        (),
        exit=0,
        write=_raw("t.json", lambda: otel_spans(4000)),
    ),
    Case(
        "requests-4000-turns",
        REQUESTS_IMPORT,
        (),
        exit=0,
        write=_raw("t.jsonl", lambda: request_log(4000)),
    ),
)
#: Many spans: what the work grows with. 68,500 spans are 41.9 MB, about the most the
#: app's 40 MB upload limit (41,943,040 bytes) admits; 6,850 are the same spans' base.
MANY_SPANS = tuple(
    Case(
        f"otel-{n}-spans",
        OTEL_IMPORT,
        (),
        exit=0,
        write=_raw("t.json", lambda n=n: otel_spans(n, messages=False)),
    )
    for n in (6_850, 68_500)
)
#: Long histories: each request shares the one before's items (``shared_history``).
HISTORY_CASES = (
    Case(
        "claude-2000-turns",
        CLAUDE_IMPORT,
        (),
        exit=0,
        write=_raw("t.jsonl", lambda: claude_code(2000)),
    ),
    Case(
        "claude-4000-turns",
        CLAUDE_IMPORT,
        (),
        exit=0,
        write=_raw("t.jsonl", lambda: claude_code(4000)),
    ),
    Case("codex-4000-turns", CODEX_IMPORT, (), exit=0, write=_raw("t.jsonl", lambda: codex(4000))),
)

CASES = CLAUDE_CASES + CODEX_CASES + REQUEST_CASES + OTEL_CASES + ZIP_CASES + LAYOUT_CASES


def build(tmp: Path, cases: tuple[Case, ...] = CASES) -> None:
    for case in cases:
        folder = tmp / case.name
        folder.mkdir(parents=True, exist_ok=True)
        if case.write is not None:
            case.write(folder)
