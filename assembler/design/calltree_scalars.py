"""YAML scalars and lines for the call tree: names, quoted and literal-block fields.

Every text the model reads in the tree goes through here, so that a YAML parser
reads back exactly what was recorded (a quoted scalar escapes what PyYAML would
refuse or fold; a literal block is used only where it is faithful).
"""

from __future__ import annotations

import functools
import json
import re

from assembler.design.calltree import CallNode, Expose

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*\Z")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}
# Characters PyYAML refuses or folds inside a double-quoted scalar; JSON leaves them raw.
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")
# Anything that would make a literal block scalar unfaithful.
_BLOCK_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)

# A line ending in a space or a tab: a literal block would drop it.
_TRAILING_BLANK = re.compile(r"[ \t](?:\n|\Z)")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def quote(text: str) -> str:
    """A double-quoted YAML scalar that parses back to ``text`` exactly."""
    return _UNSAFE.sub(_escape, json.dumps(text, ensure_ascii=False))


@functools.lru_cache(maxsize=4096)  # a session calls few functions, many times
def name_scalar(name: str) -> str:
    """Function names stay plain when YAML would read them back unchanged."""
    if _PLAIN.match(name) and name.lower() not in _RESERVED:
        return name
    return quote(name)


def _block_ok(text: str) -> bool:
    return (
        "\n" in text.rstrip("\n")
        and not _BLOCK_UNSAFE.search(text)
        and not text[:1].isspace()
        and not text.endswith("\n\n")
        and not _TRAILING_BLANK.search(text)
    )


def field_lines(key: str, value: str, indent: int) -> list[str]:
    """``key: value`` at ``indent``; multi-line text as a literal ``|`` block."""
    pad = " " * indent
    if _block_ok(value):
        chomp = "" if value.endswith("\n") else "-"
        body = value[:-1] if value.endswith("\n") else value
        inner = " " * (indent + 2)
        return [f"{pad}{key}: |{chomp}"] + [
            f"{inner}{line}" if line else "" for line in body.split("\n")
        ]
    return [f"{pad}{key}: {quote(value)}"]


#: The budget is in tokens, estimated from characters. Three characters a token
#: over-counts English and YAML, so a folded tree stays under its budget when
#: counted with a real tokenizer.
CHARS_PER_TOKEN = 3


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def extra_lines(node: CallNode, expose: Expose, indent: int) -> list[str]:
    """The ``llm`` and ``tools`` lists that ``expose=llm`` / ``full`` keep."""
    lines: list[str] = []
    pad = " " * indent
    if expose in (Expose.LLM, Expose.FULL) and node.llm:
        lines.append(f"{pad}llm:")
        for ex in node.llm:
            item = field_lines("input", ex.input, indent + 4)
            item[0] = f"{pad}  - {item[0].lstrip()}"
            lines += item + field_lines("output", ex.output, indent + 4)
    if expose is Expose.FULL and node.tools:
        lines.append(f"{pad}tools:")
        for use in node.tools:
            lines.append(f"{pad}  - name: {name_scalar(use.name)}")
            if use.input is not None:
                lines += field_lines("input", use.input, indent + 4)
            if use.output is not None:
                lines += field_lines("output", use.output, indent + 4)
    return lines


def list_item(lines: list[str], indent: int) -> list[str]:
    """Turn the first of a mapping's lines into a ``- `` list item."""
    lines[0] = " " * indent + "- " + lines[0][indent + 2 :]
    return lines
