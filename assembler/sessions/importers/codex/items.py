"""A rollout's ``response_item`` payloads as the blocks of the history Codex sends.

A block's text is what the model reads of the item: a message's text, a call's arguments,
an output as Codex put it into the conversation (cut by the rule of its version, see
``truncation.py``; an output that is a JSON object with an ``output`` field read decoded).
Each item also costs the tokens that frame it on the wire (its role, channel and recipient),
which no text in the rollout shows; they are added to the block's counted size (see
``FRAMING``). Reasoning is encrypted: a block of its response's reasoning tokens.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from assembler.sessions.importers.codex.truncation import legacy_model_text
from assembler.sessions.importers.hidden import Hidden
from assembler.sessions.importers.history import Item, content_text, json_text
from assembler.sessions.importers.records import iter_items

OUTPUT_ITEMS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
RESULT_ITEMS = ("function_call_output", "custom_tool_call_output")
#: Calls the provider runs itself within the response: their results are in the input of
#: the rest of the response and of every later request, and the rollout does not show them.
HOSTED_ITEMS = ("web_search_call",)

#: Tokens around an item on the wire, beyond its text. Fitted on the corpus's billed growth
#: between consecutive requests of a turn (docs/importers.md, "Rules and their evidence"):
#: a call with its output grows the input by their texts plus 26 tokens (codemie-code,
#: median of 25 single pairs, 24 to 50).
FRAMING = {
    "message": 4,
    "function_call": 13,
    "custom_tool_call": 13,
    "local_shell_call": 13,
    "function_call_output": 13,
    "custom_tool_call_output": 13,
    "reasoning": 2,
    "image": 0,
}
#: What a reasoning item with a summary costs beyond its reasoning tokens and framing, the
#: same whatever the summary's length (long summaries of several parts cost no more): at
#: the moonmind rollouts' turn starts the bill dropped 22 to 34 tokens per item more than
#: their reasoning_output_tokens, and 17 fits the growth within a turn best (median error
#: under 8 tokens a request). codemie-code's reasoning has no summary.
SUMMARY_FRAMING = 17

#: Observed on Codex rollouts: an image in the history adds about 256 tokens to the input
#: (which the cached count leaves out); the rollout records only its URL.
IMAGE_TOKENS = 256

Count = Callable[[str], int]


def call_name(payload: Mapping[str, Any]) -> str:
    name = payload.get("name")
    return name[:200] if isinstance(name, str) and name else str(payload.get("type"))


def call_input(payload: Mapping[str, Any]) -> str:
    for key in ("arguments", "input", "action"):
        value = payload.get(key)
        if value is not None:
            return value if isinstance(value, str) else json_text(value)
    return ""


def output_text(output: Any, legacy: bool) -> str:
    """A tool output as the model read it: cut by the legacy rule where it applies, and a
    JSON object with an ``output`` text read as that text, its other fields a line each
    (on the moonmind rollouts the decoded text fits the billed growth to 17 tokens per
    request, the escaped JSON to 95)."""
    text = content_text(output)
    if legacy:
        text = legacy_model_text(text)
    if not text.startswith("{"):
        return text
    try:
        value = json.loads(text, strict=False)  # a raw newline in a string still reads
    except (ValueError, RecursionError):
        return text
    if not isinstance(value, dict) or not isinstance(value.get("output"), str):
        return text
    rest = [f"{k}: {json_text(v)}" for k, v in value.items() if k != "output"]
    return "\n".join([value["output"], *rest])


def framed(item: Item, count: Count) -> Item:
    """``item`` with its size set: its text counted plus the framing of its kind."""
    extra = FRAMING.get(item.kind, FRAMING["message"])
    how = f"its text counted, plus {extra} tokens of framing"
    return Item(
        item.role,
        item.kind,
        item.text,
        item.label,
        hidden=Hidden(count(item.text) + extra, how, sized=True, inferred=False),
        use_id=item.use_id,
    )


def history_item(payload: Mapping[str, Any], count: Count, legacy: bool) -> Item | None:
    """How an item is sent back as input; None for an item that is not (ghost snapshots)."""
    itype = payload.get("type")
    if itype == "reasoning":
        rid = payload.get("id")
        summary = [
            p["text"] for p in iter_items(payload.get("summary")) if isinstance(p.get("text"), str)
        ]
        head = f"[reasoning {rid if isinstance(rid, str) else ''}: encrypted]"
        # its share of the response's reasoning tokens is added once the usage is read
        extra = FRAMING["reasoning"] + (SUMMARY_FRAMING if summary else 0)
        how = f"its response's reasoning_output_tokens, plus {extra} tokens of summary and framing"
        return Item(
            "assistant",
            "reasoning",
            "\n".join([head, *summary]),
            hidden=Hidden(extra, how, sized=True),
        )
    if itype in HOSTED_ITEMS:
        # its results are not in the rollout: sized from the billed growth
        return Item("assistant", str(itype), call_input(payload), hidden=Hidden())
    if itype == "message":
        role = payload.get("role")
        content = payload.get("content")
        if isinstance(content, list):  # images become blocks of their own (see images())
            content = [
                p
                for p in content
                if not (isinstance(p, Mapping) and p.get("type") == "input_image")
            ]
        item = Item(
            "assistant" if role == "assistant" else "user",
            "text" if role in ("user", "assistant") else str(role),
            content_text(content),
        )
        return framed(item, count)
    if itype in OUTPUT_ITEMS:
        text = call_input(payload)
        return framed(Item("assistant", str(itype), text, call_name(payload)), count)
    if itype in RESULT_ITEMS:
        text = output_text(payload.get("output"), legacy)
        return framed(Item("user", str(itype), text), count)
    return None


def images(payload: Mapping[str, Any]) -> list[Item]:
    """One block per ``input_image`` of a message, sized rather than a placeholder; its
    text names the image (a hash of its URL), so a changed image is a changed block."""
    out = []
    for part in iter_items(payload.get("content")):
        if part.get("type") == "input_image":
            url = part.get("image_url")
            digest = hashlib.sha256(str(url).encode("utf-8")).hexdigest()[:16]
            how = f"about {IMAGE_TOKENS} tokens per image"
            out.append(
                Item(
                    "user",
                    "image",
                    f"[image {digest}]",
                    hidden=Hidden(IMAGE_TOKENS, how, sized=True),
                )
            )
    return out
