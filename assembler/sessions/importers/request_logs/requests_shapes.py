"""The blocks of a raw request body, in the order the API reads them: Anthropic Messages,
OpenAI Chat Completions or Responses. Every part and input item is kept (one the
importer does not know as its JSON), with its cache marker; see docs/importers.md."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assembler.sessions.importers.hidden import image_hidden
from assembler.sessions.importers.history import content_text, json_text
from assembler.sessions.importers.records import iter_items

Block = dict[str, Any]

_MARKERS = ("cache_control", "prompt_cache_breakpoint")  # Anthropic; OpenAI GPT-5.6+


def _marked(part: Mapping[str, Any]) -> bool:
    return any(isinstance(part.get(m), Mapping) for m in _MARKERS)


def _mark(block: Block, part: Mapping[str, Any] | None) -> None:
    """Put ``part``'s cache marker, if it has one, on ``block``, with the lifetime it
    asks for (``cache_control.ttl``; kept only where it differs from the request's)."""
    if part is None or not _marked(part):
        return
    block["breakpoint"] = True
    control = part.get("cache_control")
    if isinstance(control, Mapping) and control.get("ttl") in ("5m", "1h"):
        block["ttl"] = control["ttl"]


def own_lifetimes(blocks: list[Block], request_ttl: str | None) -> list[Block]:
    """``blocks`` with a marker's lifetime kept only where it differs from the request's
    (a request mixing 1-hour and 5-minute markers); none when the request has no lifetime
    the API takes."""
    for block in blocks:
        if "ttl" in block and (request_ttl is None or block["ttl"] == request_ttl):
            del block["ttl"]
    return blocks


def _without_marker(part: Mapping[str, Any]) -> dict[str, Any]:
    # The marker is not content: moving it must not look like a changed block.
    return {k: v for k, v in part.items() if k not in _MARKERS}


def write_ttl(request: Mapping[str, Any]) -> str | None:
    """The lifetime an Anthropic request's cache writes are made with, from its markers'
    ``cache_control.ttl``: ``1h`` when every marker asks for an hour, ``5m`` when any
    asks for five minutes or names none (the API's default); 1-hour entries must come
    first, so the tail the next request reads is then a 5-minute one. ``None`` when no
    marker names a lifetime or one names a value the API does not take."""
    markers = [
        part["cache_control"]
        for part in (
            request,
            *iter_items(request.get("tools")),
            *iter_items(request.get("system")),
            *(p for m in iter_items(request.get("messages")) for p in iter_items(m.get("content"))),
        )
        if isinstance(part.get("cache_control"), Mapping)
    ]
    if not any("ttl" in m for m in markers):
        return None
    ttls = {m.get("ttl", "5m") for m in markers}
    if not ttls <= {"5m", "1h"}:
        return None
    return "5m" if "5m" in ttls else "1h"


def _tool_blocks(tools: Any) -> list[Block]:
    """One block per tool definition, so a marker on the last tool lands exactly."""
    blocks = []
    for i, tool in enumerate(iter_items(tools)):
        fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        name = fn.get("name") if isinstance(fn, Mapping) else None
        block: Block = {
            "section": "tools",
            "name": f"tools[{i}]" + (f" {name}" if isinstance(name, str) else ""),
            "text": json_text(_without_marker(tool)),
        }
        _mark(block, tool)
        blocks.append(block)
    return blocks


_UNSENT = ("thinking", "redacted_thinking")  # earlier turns' thinking is not read as input


def known_part_text(part: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kind, text) of a content part of a type read as text, a call or an attachment."""
    ptype = part.get("type")
    if ptype in ("text", "input_text", "output_text"):
        return "text", str(part.get("text", ""))
    if ptype == "tool_use":
        body = {
            "type": "tool_use",
            "id": part.get("id"),
            "name": part.get("name"),
            "input": part.get("input"),
        }
        return "tool_use", json_text(body)
    if ptype == "tool_result":
        return "tool_result", content_text(part.get("content"))
    if ptype in ("image", "input_image", "image_url", "document", "input_file"):
        return str(ptype), f"[{ptype}]"
    return None


def _part_text(part: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kind, text) of one content part; a type not known here (server tool calls and
    results, search results, …) is still input: its JSON, so its marker is kept too."""
    got = known_part_text(part)
    if got is not None or part.get("type") in _UNSENT:
        return got
    return str(part.get("type") or "part")[:40], json_text(_without_marker(part))


def _image_tokens(part: Mapping[str, Any]) -> list[int]:
    """The size of each image of an ``image`` part or a ``tool_result`` holding images, from
    its header; empty when there is none, or one whose size its bytes do not give (that
    part stays as it was: text)."""
    if part.get("type") == "image":
        images = [part]
    elif part.get("type") == "tool_result":
        images = [p for p in iter_items(part.get("content")) if p.get("type") == "image"]
    else:
        return []
    sizes = [image_hidden(p) for p in images]
    return [h.tokens for h in sizes] if sizes and all(h.sized for h in sizes) else []


def _role(value: Any) -> str:
    # The schema knows user and assistant; tool results are input the user side sends.
    return "assistant" if value == "assistant" else "user"


class Blocks:
    """Blocks under construction, named by their count of messages and system parts so
    far (``messages=``, ``system=``: where a continued rendering starts)."""

    def __init__(self, messages: int = 0, system: int = 0) -> None:
        self.blocks: list[Block] = []
        self.messages = messages
        self.system = system

    def system_text(self, text: str, marker: Mapping[str, Any] | None = None) -> None:
        block: Block = {"section": "system", "name": f"system[{self.system}]", "text": text}
        _mark(block, marker)
        self.blocks.append(block)
        self.system += 1

    def message(
        self, role: str, what: str, text: str, marker: Mapping[str, Any] | None = None
    ) -> None:
        block: Block = {
            "section": "messages",
            "name": f"messages[{self.messages}] {what}",
            "role": role,
            "text": text,
        }
        _mark(block, marker)
        self.blocks.append(block)
        self.messages += 1

    def content(self, role: str, content: Any) -> None:
        if isinstance(content, str):
            self.message(role, "text", content)
            return
        for part in iter_items(content):
            got = _part_text(part)
            if got is None:
                continue
            sizes = _image_tokens(part)
            if not sizes:
                self.message(role, got[0], got[1], part)
            elif part.get("type") == "image":
                # sized from its header, as a transcript's images are: "[image]" is no size
                self.message(role, got[0], got[1], part)
                self.blocks[-1]["tokens"] = sizes[0]
            else:
                # a tool result holding images (a screenshot read back): its text, then
                # each image at its size, the result's marker after the last
                inner = [p for p in iter_items(part.get("content")) if p.get("type") != "image"]
                self.message(role, got[0], content_text(inner))
                for i, n in enumerate(sizes):
                    last = i == len(sizes) - 1
                    self.message(role, f"{got[0]} image", "[image]", part if last else None)
                    self.blocks[-1]["tokens"] = n


def anthropic_blocks(request: Mapping[str, Any]) -> list[Block]:
    b = Blocks()
    b.blocks.extend(_tool_blocks(request.get("tools")))
    system = request.get("system")
    if isinstance(system, str):
        b.system_text(system)
    for part in iter_items(system):
        b.system_text(str(part.get("text", "")), part)
    for msg in iter_items(request.get("messages")):
        b.content(_role(msg.get("role")), msg.get("content"))
    if _marked(request) and b.blocks:  # top-level cache_control: automatic, on the last block
        _mark(b.blocks[-1], request)
    return b.blocks


def chat_blocks(request: Mapping[str, Any]) -> list[Block]:
    b = Blocks()
    b.blocks.extend(_tool_blocks(request.get("tools")))
    for msg in iter_items(request.get("messages")):
        role = msg.get("role")
        if role in ("system", "developer"):
            b.system_text(content_text(msg.get("content")), _first_marked(msg.get("content")))
            continue
        if msg.get("content") is not None:
            b.content(_role(role), msg.get("content"))
        for call in iter_items(msg.get("tool_calls")):
            b.message("assistant", "tool_call", json_text(call))
    return b.blocks


def responses_blocks(request: Mapping[str, Any]) -> list[Block]:
    b = responses_head(request)
    items = request.get("input")
    if isinstance(items, str):
        b.message("user", "text", items)
    listed = list(iter_items(items))
    responses_items(b, listed, _turn_start(listed))
    return b.blocks


def responses_head(request: Mapping[str, Any]) -> Blocks:
    """A Responses request's blocks before its input: its tools, its instructions."""
    b = Blocks()
    b.blocks.extend(_tool_blocks(request.get("tools")))
    if isinstance(request.get("instructions"), str):
        b.system_text(request["instructions"])
    return b


def responses_items(b: Blocks, listed: list[Mapping[str, Any]], turn: int) -> None:
    """The blocks of input items, added to ``b``; reasoning before index ``turn`` (where
    the current user turn starts) is left out."""
    for i, item in enumerate(listed):
        itype = item.get("type", "message")
        if itype == "reasoning" and i < turn:
            continue  # reasoning leaves the input at a new user turn (as Codex's importer has it)
        if itype == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                b.system_text(content_text(item.get("content")), _first_marked(item.get("content")))
            else:
                b.content(_role(role), item.get("content"))
        elif itype == "function_call":
            body = {k: item.get(k) for k in ("type", "call_id", "name", "arguments")}
            b.message("assistant", "function_call", json_text(body))
        elif itype in ("function_call_output", "custom_tool_call_output"):
            b.message("user", str(itype), content_text(item.get("output")), item)
        else:  # reasoning, custom tool calls, server tools' calls, item references: all input
            role = "user" if str(itype).endswith("_output") else "assistant"
            b.message(role, str(itype)[:40], json_text(_without_marker(item)), item)


def is_user_message(item: Mapping[str, Any]) -> bool:
    return item.get("type", "message") == "message" and item.get("role") == "user"


def _turn_start(items: list[Mapping[str, Any]]) -> int:
    """Where the current turn starts: the last user message's index (0 if none)."""
    users = [i for i, item in enumerate(items) if is_user_message(item)]
    return users[-1] if users else 0


def _first_marked(content: Any) -> Mapping[str, Any] | None:
    """A system or developer message is one block: its parts' marker, if one has it."""
    return next((p for p in iter_items(content) if _marked(p)), None)


def stored_conversation(request: Mapping[str, Any], response: Mapping[str, Any]) -> list[Any]:
    """The input items a Responses request sent and the output items it got back: what a
    later request naming this response in ``previous_response_id`` reads before its own."""
    items = request.get("input")
    sent = (
        [{"role": "user", "content": items}] if isinstance(items, str) else list(iter_items(items))
    )
    return sent + list(iter_items(response.get("output")))
