"""Images in a logged Anthropic request are sized from their header, as a transcript's are:
a screenshot read back in a tool result costs ~1,500 tokens, not the few of "[image]"."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path
from typing import Any

from importer_helpers import steps

from assembler.sessions.importers.hidden import anthropic_image_tokens
from assembler.sessions.importers.request_logs.requests_log import import_requests


def _png(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I4sII", 13, b"IHDR", width, height)
    return base64.b64encode(header + b"\x08\x02\x00\x00\x00" + b"\x00" * 64).decode()


def _image(width: int, height: int) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _png(width, height)}}  # fmt: skip


def _log(tmp_path: Path, messages: list[Any]) -> Path:
    request = {
        "model": "claude-sonnet-4-5",
        "system": "You are a coding agent.",
        "messages": messages,
    }
    usage = {"input_tokens": 2000, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5}  # fmt: skip
    line = {
        "timestamp": "2026-03-12T15:00:00Z",
        "url": "https://api.anthropic.com/v1/messages",
        "request": request,
        "response": {"id": "msg_1", "type": "message", "content": [], "usage": usage},
    }
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(line) + "\n", "utf-8")
    return path


def test_a_screenshot_in_a_tool_result_is_sized_and_keeps_the_results_marker(
    tmp_path: Path,
) -> None:
    result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "text", "text": "the screen:"}, _image(1920, 1080)],
        "cache_control": {"type": "ephemeral"},
    }
    use = {"type": "tool_use", "id": "t1", "name": "screenshot", "input": {}}
    messages = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
    ]
    (step,) = steps(import_requests(_log(tmp_path, messages)).data)
    blocks = list(step.call.request or ())
    text, image = blocks[-2], blocks[-1]
    assert text.text == "the screen:" and text.tokens is None and not text.breakpoint
    assert image.text == "[image]" and image.breakpoint  # the result's marker, after its image
    assert image.tokens == anthropic_image_tokens(1920, 1080) > 1000


def test_a_top_level_image_is_sized_from_its_header(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "what is this"}, _image(800, 600)]}
    ]
    (step,) = steps(import_requests(_log(tmp_path, messages)).data)
    image = list(step.call.request or ())[-1]
    assert image.text == "[image]" and image.tokens == anthropic_image_tokens(800, 600)


def test_an_image_without_readable_bytes_stays_as_it_was(tmp_path: Path) -> None:
    broken = {"type": "image", "source": {"type": "url", "url": "https://example.invalid/a.png"}}
    messages = [{"role": "user", "content": [broken]}]
    (step,) = steps(import_requests(_log(tmp_path, messages)).data)
    assert list(step.call.request or ())[-1].tokens is None
