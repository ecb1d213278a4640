"""Built-in L2 components: this call only, delivered in the current user message."""

from __future__ import annotations

import functools
import json

from assembler.design.components.memory import prefetch_block
from assembler.design.context import (
    Attachment,
    Context,
    ContractKind,
    Frame,
    OutputContract,
    format_time,
)
from assembler.design.layers import Layer
from assembler.design.registry import Registry


def contract_sentence(contract: OutputContract) -> str:
    """The output contract in the three forms of design §4' item 2."""
    if contract.kind is ContractKind.DECISION:
        return (
            "Your output will be parsed by the caller into a decision — emit exactly one\n"
            "JSON object matching the menu below."
        )
    if contract.kind is ContractKind.ARTIFACT:
        consumer = (
            f", the deliverable consumed by `{contract.consumer}`" if contract.consumer else ""
        )
        return f"Your output becomes `{contract.artifact}`{consumer}."
    param = f" as its `{contract.param}`" if contract.param else ""
    return f"Your output is passed to `{contract.next_function}`{param}."


def first_sentence(doc: str) -> str:
    text = " ".join(doc.split())
    for end in (". ", "? ", "! "):
        if end in text:
            return text.split(end, 1)[0] + end.strip()
    return text


def _in_frame(ctx: Context) -> bool:
    return ctx.frame is not None


def _in_function(ctx: Context) -> bool:
    # §4' item 1: "called inside an @agentic_function"; not at the top level
    return ctx.frame is not None and ctx.frame.function is not None


#: the last situation built and what it was built from: successive steps of one
#: call ask for the same one, and handing on the same object spares comparing it
_last_situation: list[tuple[object, str]] = []


def _situation(ctx: Context) -> str:
    frame = ctx.frame
    assert frame is not None and frame.function is not None
    key = (frame.function, frame.doc, frame.call_path, frame.position, frame.contract)
    last = _last_situation[0] if _last_situation else None  # one read: key and text agree
    if last is not None and last[0] == key:
        return last[1]
    text = _situation_text(frame.function, frame)
    _last_situation[:] = [(key, text)]
    return text


def _situation_text(function: str, frame: Frame) -> str:
    # the lines around the position: the same for every step of a call
    text = _situation_head(function, frame.doc, frame.call_path)
    if frame.position:
        text += f"\nPosition: {frame.position}"
    if frame.contract is not None:
        text += "\n" + contract_sentence(frame.contract)
    return text + _situation_tail(function)


@functools.lru_cache(maxsize=1024)
def _situation_head(function: str, doc: str, call_path: tuple[str, ...]) -> str:
    lines = [f"You are running INSIDE the agentic function `{function}`."]
    if doc:
        lines.append(f"Job: {first_sentence(doc)}")
    lines.append(f"Call path: {' → '.join(call_path)}")
    return "<situation>\n" + "\n".join(lines)


@functools.lru_cache(maxsize=1024)
def _situation_tail(function: str) -> str:
    return (
        f"\n\nThe tool list may include `{function}` itself — do NOT call it (re-entering\n"
        "causes infinite recursion). Use lower-level tools to do the work directly.\n"
        "</situation>"
    )


def attachment_text(item: Attachment) -> str:
    """One attachment as the model receives it after the input text."""
    head = f'<attachment name="{item.name}" type="{item.media_type}"'
    if item.text is not None:
        return f"{head}>\n{item.text.strip()}\n</attachment>"
    size = f' tokens="{item.tokens}"' if item.tokens is not None else ""
    return f"{head}{size}/>"


def _user_input(ctx: Context) -> str | None:
    frame = ctx.frame
    if frame is None:
        return None
    if not frame.attachments:  # the usual; what the join below gives, as the same object
        return frame.user_input
    parts = [frame.user_input] if frame.user_input else []
    parts += [attachment_text(a) for a in frame.attachments]
    return "\n\n".join(parts)


def _output_schema(ctx: Context) -> str:
    assert ctx.frame is not None and ctx.frame.output_schema is not None
    # the §6 example's one bracket line, keys in the recorded order
    schema = json.dumps(ctx.frame.output_schema, ensure_ascii=False)
    return f"[output schema: {schema}]"


def _timestamp(ctx: Context) -> str:
    return f"[timestamp: {format_time(ctx.now)}]"


def register_components(registry: Registry) -> None:
    add = registry.component
    add(
        "situation",
        Layer.L2,
        1,
        cacheable=False,
        condition=_in_function,
        condition_text="the call runs inside an agentic function (not at the top level)",
        template=(
            "<situation>\nYou are running INSIDE the agentic function `{fn_name}`.\n"
            "Job: {fn_doc}\nCall path: {call_path}\nPosition: {program_position}\n"
            "Your output: {output_contract}\n\n"
            "The tool list may include `{fn_name}` itself — do NOT call it (re-entering\n"
            "causes infinite recursion). Use lower-level tools to do the work directly.\n"
            "</situation>"
        ),
    )(_situation)
    add(
        "memory_prefetch",
        Layer.L2,
        2,
        cacheable=False,
        condition=lambda ctx: ctx.frame is not None and bool(ctx.frame.memory_prefetch),
        condition_text="memory was recalled for this turn",
        template="<memory-context>recalled, not new user input · {snippets}</memory-context>",
    )(prefetch_block)
    add(
        "user_input",
        Layer.L2,
        3,
        cacheable=False,
        condition=_in_frame,
        condition_text="always (inside a call)",
        template='{this call\'s input}\n\n<attachment name="{file}" type="{media type}">…</attachment>',
    )(_user_input)
    add(
        "output_schema",
        Layer.L2,
        4,
        cacheable=False,
        condition=lambda ctx: ctx.frame is not None and ctx.frame.output_schema is not None,
        condition_text="this step requires an output format",
        template="[output schema: {JSON schema}]",
    )(_output_schema)
    add(
        "timestamp",
        Layer.L2,
        5,
        cacheable=False,
        template="[timestamp: {ISO time of this call}]",
    )(_timestamp)
