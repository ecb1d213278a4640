"""Reading transcript records and their billed usage."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assembler.limits import (
    MAX_FIELD_CHARS,
    MAX_IMPORT_BYTES,
    MAX_INT,
    ReadRefused,
    count_problem,
    kind_of,
    read_capped,
    time_problem,
)

MAX_BYTES = MAX_IMPORT_BYTES
# One JSON line: a text field at its cap, escaped (up to 6 bytes a character in the worst case
# is rare; twice the cap covers quoted code and logs).
MAX_RECORD_BYTES = 2 * MAX_FIELD_CHARS
UNRECORDED_TEXT = "[system prompt and tool definitions: not recorded in the transcript]"
PREVIEW = 60


class ImporterError(ValueError):
    """A foreign file cannot be imported. ``str()`` is one line: file, line, what was expected."""

    def __init__(self, source: str, message: str, *, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.message = " ".join(message.split())
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {self.message}")


@dataclass(frozen=True)
class Record:
    """One JSON object of a JSON Lines file, with its 1-based line."""

    line: int
    data: Mapping[str, Any]
    source: str

    def fail(self, message: str) -> ImporterError:
        return ImporterError(self.source, message, line=self.line)

    def get_str(self, key: str, default: str | None = None) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str):
            raise self.fail(f"{key}: expected a string, found {kind_of(value)}")
        return value

    def get_map(self, key: str) -> Mapping[str, Any]:
        value = self.data.get(key)
        if not isinstance(value, Mapping):
            raise self.fail(f"{key}: expected an object, found {kind_of(value)}")
        return value

    def at(self, key: str = "timestamp") -> datetime:
        return parse_time(self.get_str(key), self, key)


@dataclass
class Skipped:
    """Lines that were not JSON objects: skipped, counted, the first one described."""

    count: int = 0
    first_line: int = 0
    first_source: str = ""
    first_reason: str = ""

    def add(self, source: str, line: int, reason: str) -> None:
        if self.count == 0:
            self.first_source, self.first_line, self.first_reason = source, line, reason
        self.count += 1

    def warnings(self, main: str) -> tuple[str, ...]:
        """``skipped N malformed lines (first at line K: …)``, naming the file if not ``main``."""
        if not self.count:
            return ()
        plural = "line" if self.count == 1 else "lines"
        where = f"line {self.first_line}"
        if self.first_source != main:
            where += f" of {self.first_source}"
        return (f"skipped {self.count} malformed {plural} (first at {where}: {self.first_reason})",)


def read_jsonl(
    path: Path,
    skipped: Skipped,
    *,
    oversized: Callable[[int, bytes], Record | None] | None = None,
) -> list[Record]:
    """Every line holding a JSON object; other non-blank lines are skipped and counted.

    A recording cut short ends in a truncated line, and a crashed writer can leave
    garbage in the middle: neither should cost the user the rest of the file. A line
    over the size a record may have is an error, unless ``oversized`` takes it (line
    number, bytes): it returns what stands in for it, None for nothing, or raises.
    """
    source = str(path)
    try:
        raw = read_capped(path, MAX_BYTES)
    except ReadRefused as exc:
        raise ImporterError(source, str(exc)) from None
    records: list[Record] = []
    # Split on LF only: U+2028, U+2029 and U+0085 are text inside a JSON string.
    for number, line in enumerate(raw.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_RECORD_BYTES and oversized is not None:
            stand_in = oversized(number, line)
            if stand_in is not None:
                records.append(stand_in)
            continue
        if len(line) > MAX_RECORD_BYTES:
            raise ImporterError(
                source,
                f"the line is {len(line):,} bytes; one record may hold at most "
                f"{MAX_RECORD_BYTES:,} (a text field at most {MAX_FIELD_CHARS:,} characters)",
                line=number,
            )
        try:
            value = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            skipped.add(source, number, f"not UTF-8 text (byte {exc.start})")
            continue
        except (json.JSONDecodeError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            skipped.add(source, number, f"not valid JSON: {reason}")
            continue
        except ValueError:  # an integer over the interpreter's 4,300-digit limit
            skipped.add(source, number, "a number has more than 4,300 digits")
            continue
        if not isinstance(value, dict):
            skipped.add(source, number, f"expected a JSON object, found {kind_of(value)}")
            continue
        # a \uD800-\uDFFF escape, perhaps half of a pair (JSON spells the u in lower
        # case only)
        if _SURROGATE_ESCAPE.search(line):
            value = _whole_characters(value)
        if _ODD_COUNT.search(line):  # only then is the record walked for its usage
            bad = bad_usage(value)
            if bad is not None:
                raise ImporterError(source, f"{bad[0]}: {bad[1]}", line=number)
        records.append(Record(number, value, source))
    return records


#: The start of a surrogate's escape. One search for the literal ``\u`` and then the
#: letter: JSON text is full of backslashes, where a search for ``\ud`` and one for ``\uD``
#: each stop (the 221-request session's 2,386 lines: 1.7 ms against 4.5-5.4 ms).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD]")
# A count key whose value is not null or an integer of at most 15 digits (under 2**53):
# a byte scan that passes every ordinary line without building anything. The blanks after
# the colon are taken whole (possessive): given back, they let the look-ahead start on a
# blank and fail, and every line written with ": " (Python's json.dumps) was walked.
_ODD_COUNT = re.compile(
    rb'(?:_tokens|_requests)"\s*:\s*+(?!(?:0|[1-9][0-9]{0,14})\s*[,}\]]|null\s*[,}\]])'
)
_COUNT_KEY = re.compile(r"(?:_tokens|_requests)\Z")


def bad_usage(value: Any, where: str = "") -> tuple[str, str] | None:
    """(field, why) of the first count in a usage object of ``value`` (any mapping under a
    key ending in ``usage``: ``message.usage``, ``info.last_token_usage``) that is not a
    whole number of tokens from 0 to 2**53 - 1; ``null`` is a count not given."""
    stack: list[tuple[str, Any, bool]] = [(where, value, where.endswith("usage"))]
    while stack:
        path, node, in_usage = stack.pop()
        if isinstance(node, Mapping):
            for key, child in node.items():
                field = f"{path}.{key}" if path else str(key)
                if in_usage and _COUNT_KEY.search(str(key)) and child is not None:
                    why = count_problem(child)
                    if why is not None:
                        return field, why
                child_usage = in_usage or str(key).lower().endswith("usage")
                if isinstance(child, Mapping | list):
                    stack.append((field, child, child_usage))
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", child, in_usage) for i, child in enumerate(node))
    return None


def _text(value: str) -> str:
    """Pairs joined, a lone surrogate (half an emoji cut by a writer) made U+FFFD: what a
    session can hold (it is UTF-8 text)."""
    return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _whole_characters(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every string (key or value) made whole text; iterative, any depth."""
    root: dict[str, Any] = {}
    stack: list[tuple[Any, dict[str, Any] | list[Any]]] = [(data, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, value in items:
            if isinstance(value, str):
                value = _text(value)
            elif isinstance(value, dict | list):
                child: dict[str, Any] | list[Any] = (
                    {} if isinstance(value, dict) else [None] * len(value)
                )
                stack.append((value, child))
                value = child
            if isinstance(target, dict):
                target[_text(str(key))] = value
            else:
                target[int(key)] = value
    return root


def parse_time(text: str, record: Record, field: str = "timestamp") -> datetime:
    """ISO 8601 with a zone; a time without one is read as UTC (transcripts write ``Z``).
    A time outside the years a session holds is refused here, naming the line."""
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise record.fail(f"{field}: expected an ISO 8601 timestamp, found {text[:40]!r}") from None
    at = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    why = time_problem(at)
    if why is not None:
        raise record.fail(f"{field}: {why}")
    return at


def preview(text: str, limit: int = PREVIEW) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def as_int(value: Any) -> int:
    """A usage count: a whole number 0 to 2**53 - 1 (a float that is one taken); anything
    else counts as 0. Counts in a record's usage objects are checked as it is read."""
    if type(value) is int:  # what JSON reads a count as (a bool's type is bool)
        return value if 0 < value <= MAX_INT else 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_INT:
        return value
    return 0


# --- usage ----------------------------------------------------------------------------


def usage(input: int, cache_read: int, cache_write: int, output: int) -> dict[str, int]:
    """Counts in a session's range: a sum of two checked counts may pass 2**53 - 1."""
    return {
        "input": min(MAX_INT, max(0, input)),
        "cache_read": min(MAX_INT, max(0, cache_read)),
        "cache_write": min(MAX_INT, max(0, cache_write)),
        "output": min(MAX_INT, max(0, output)),
    }


def anthropic_usage(u: Mapping[str, Any]) -> dict[str, int]:
    """Anthropic ``input_tokens`` already excludes cached tokens.

    ``cache_creation_input_tokens`` is the write total; when only the 5m/1h split
    is given, the split is summed. The 1-hour part is kept as ``cache_write_1h``
    (priced at its own rate), ``server_tool_use.web_search_requests`` as ``web_searches``.
    """
    write = as_int(u.get("cache_creation_input_tokens"))
    five, hour = _write_split(u)
    if not write:
        write = five + hour
    out = usage(
        as_int(u.get("input_tokens")),
        as_int(u.get("cache_read_input_tokens")),
        write,
        as_int(u.get("output_tokens")),
    )
    if hour:
        out["cache_write_1h"] = min(hour, write)
    tools = u.get("server_tool_use")
    searches = as_int(tools.get("web_search_requests")) if isinstance(tools, Mapping) else 0
    if searches:
        out["web_searches"] = searches
    return out


def _write_split(u: Mapping[str, Any]) -> tuple[int, int]:
    split = u.get("cache_creation")
    if not isinstance(split, Mapping):
        return 0, 0
    return as_int(split.get("ephemeral_5m_input_tokens")), as_int(
        split.get("ephemeral_1h_input_tokens")
    )


def anthropic_write_ttl(u: Mapping[str, Any]) -> str | None:
    """The lifetime a request's writes were billed with: ``1h`` when only 1-hour writes,
    ``5m`` when any 5-minute ones (a mixed bill writes its 1-hour entries first, so the
    entries at the tail, the ones the next request reads, are the 5-minute ones);
    ``None`` when the bill does not split its writes or wrote nothing."""
    five, hour = _write_split(u)
    if five:
        return "5m"
    return "1h" if hour else None


_BEDROCK_MODEL = re.compile(r"^(us|eu|apac|global)\.anthropic\.|^anthropic\.")


def platform_of(message: Mapping[str, Any], model: str) -> str:
    """Who served a response: Bedrock and Vertex ids carry their prefix, and their model
    names their own spelling (``us.anthropic.…``, ``…@20250929``)."""
    mid = message.get("id")
    mid = mid if isinstance(mid, str) else ""
    if mid.startswith("msg_bdrk_") or _BEDROCK_MODEL.match(model):
        return "anthropic-bedrock"
    if mid.startswith("msg_vrtx_") or "@" in model:
        return "anthropic-vertex"
    return "anthropic"


def openai_usage(total_input: int, cached: int, written: int, output: int) -> dict[str, int]:
    """OpenAI input counts INCLUDE cached (and written) tokens: take them out."""
    return usage(total_input - cached - written, cached, written, output)


def total_input(u: Mapping[str, int]) -> int:
    return u["input"] + u["cache_read"] + u["cache_write"]


def no_requests(source: str, what: str) -> ImporterError:
    return ImporterError(source, f"no API request found; expected {what}")


def iter_items(value: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(value, list):
        for v in value:
            if isinstance(v, Mapping):
                yield v
