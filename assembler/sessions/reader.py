"""Reading a session's text: YAML with a guarded loader and a line for every field, JSON Lines."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from assembler.limits import clip
from assembler.sessions.model import SessionError

# --- reading ------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as text: the schema checks their form."""


class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The same constructors and resolvers on libyaml's parser (about 6x faster on
    a large session).

    On any error the pure-Python loader reads the text again, so messages and
    lines are those it gives. libyaml is a little more lenient (it accepts a tab
    after a colon, for one); a session either reader accepts is then validated
    against the schema like any other.
    """


def _number(text: str) -> int | float:
    """A JSON or YAML number with a fraction of zero (``1.0``) read as the integer it
    is, as JSON Schema reads it: every number in a session is a count or an index."""
    value = float(text)
    return int(value) if value.is_integer() and abs(value) <= 2**53 else value


def _yaml_number(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int | float:
    value = loader.construct_yaml_float(node)
    return int(value) if value.is_integer() and abs(value) <= 2**53 else value


_Loader.add_constructor("tag:yaml.org,2002:float", _yaml_number)
_FastLoader.add_constructor("tag:yaml.org,2002:float", _yaml_number)

_Loader.yaml_implicit_resolvers = _FastLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


MAX_VALUES = 2_000_000
MAX_KEY_SHOWN = 80  # a key echoed in a message is cut here


def _line_map(node: yaml.Node, source: str) -> dict[tuple[str | int, ...], int]:
    """Field path → 1-based line, and checks YAML itself would let through.

    Duplicate keys are refused, and so are keys that are not plain scalars (the
    format never needs them, and turning a mapping key into text would expand
    its aliases unbounded). An alias is walked once; its expanded size is still
    counted, so nested aliases cannot expand into a memory bomb.
    """
    lines: dict[tuple[str | int, ...], int] = {}
    sizes: dict[int, int] = {}
    total = 0

    def walk(n: yaml.Node, path: tuple[str | int, ...]) -> int:
        nonlocal total
        if id(n) in sizes:  # an alias: already walked
            size = sizes[id(n)]
        else:
            lines[path] = n.start_mark.line + 1
            size = 1
            if isinstance(n, yaml.MappingNode):
                seen: set[str] = set()
                for k, v in n.value:
                    if not isinstance(k, yaml.ScalarNode):
                        raise SessionError(
                            source,
                            f"expected a text key, found a {'list' if isinstance(k, yaml.SequenceNode) else 'mapping'}",
                            line=k.start_mark.line + 1,
                            field=path_text(path),
                        )
                    key = str(k.value)
                    if key in seen:
                        raise SessionError(
                            source,
                            "duplicate key",
                            line=k.start_mark.line + 1,
                            field=path_text((*path, key)),
                        )
                    seen.add(key)
                    size += walk(v, (*path, key))
            elif isinstance(n, yaml.SequenceNode):
                for i, v in enumerate(n.value):
                    size += walk(v, (*path, i))
            sizes[id(n)] = size
            return size
        total += size
        if total > MAX_VALUES:
            raise SessionError(
                source,
                f"aliases expand to more than {MAX_VALUES:,} values",
                line=n.start_mark.line + 1,
                field=path_text(path),
            )
        return size

    walk(node, ())
    return lines


def path_text(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part.isidentifier():  # odd keys stay readable, on one line and short
            out += f"[{json.dumps(clip(part, MAX_KEY_SHOWN))}]"
        else:
            part = clip(part, MAX_KEY_SHOWN)
            out += f".{part}" if out else part
    return out or "(document)"


def read_yaml(text: str, source: str) -> tuple[Any, dict[tuple[str | int, ...], int]]:
    try:
        return _compose(_FastLoader(text), source)
    except (yaml.YAMLError, UnicodeError):
        pass  # read again below for the precise message (libyaml cannot encode a lone surrogate)
    try:
        return _compose(_Loader(text), source)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise SessionError(source, f"not valid YAML: {exc.problem or exc}", line=line) from None
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise SessionError(
            source, f"not valid YAML: character #x{exc.character:04x} is not allowed", line=line
        ) from None
    except yaml.YAMLError as exc:
        raise SessionError(source, f"not valid YAML: {exc}") from None


def _compose(loader: Any, source: str) -> tuple[Any, dict[tuple[str | int, ...], int]]:
    try:
        node = loader.get_single_node()
        if node is None:
            raise SessionError(source, "the file is empty; expected a session document")
        lines = _line_map(node, source)
        try:
            return loader.construct_document(node), lines
        except ValueError as exc:  # int(): more than 4,300 digits
            raise SessionError(source, _number_message(exc)) from None
    finally:
        loader.dispose()


def _number_message(exc: ValueError) -> str:
    if "digits" in str(exc):
        return "a number has more than 4,300 digits; expected a count or a size"
    return f"a value cannot be read: {exc}"


class _Duplicate(ValueError):
    pass


def _header_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _Duplicate(key)
    return out


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):
        raise _Duplicate
    return out


def _no_constant(name: str) -> Any:
    raise _Duplicate  # NaN / Infinity: not JSON; let the YAML reader word it


class _LineOne(Mapping[tuple[str | int, ...], int]):
    """Every field of a one-line document is on line 1."""

    def __getitem__(self, key: tuple[str | int, ...]) -> int:
        return 1

    def __contains__(self, key: object) -> bool:
        return True

    def __iter__(self) -> Iterator[tuple[str | int, ...]]:
        return iter(())

    def __len__(self) -> int:
        return 0


def read_one_line_json(text: str) -> tuple[Any, Mapping[tuple[str | int, ...], int]] | None:
    """A session written as JSON on one line, read by :mod:`json` (6x faster than
    libyaml on a large one): every line number is 1. Anything else, including
    JSON the YAML reader would refuse or word differently (duplicate keys, NaN),
    is None and goes to the YAML reader."""
    body = text.strip()
    if not body.startswith("{") or "\n" in body or "\r" in body:
        return None
    try:
        data = json.loads(
            body, object_pairs_hook=_no_duplicates, parse_constant=_no_constant, parse_float=_number
        )
    except (ValueError, RecursionError):
        return None
    return data, _LineOne()


_raw_decode = json.JSONDecoder(parse_float=_number).raw_decode
_JSON_SPACE = " \t\r"


def _json_line(line: str, hook: Any = None) -> Any:
    """One line's value, as :func:`json.loads` reads it.

    A plain line goes to the decoder directly (a fifth of the time per line);
    anything else (leading space, a BOM, an error) is read again by
    :func:`json.loads` for its exact value or message.
    """
    if hook is None:
        try:
            value, end = _raw_decode(line)
        except ValueError:
            pass
        else:
            if end == len(line) or not line[end:].strip(_JSON_SPACE):
                return value
    return json.loads(line, object_pairs_hook=hook, parse_float=_number)


def read_jsonl(text: str, source: str) -> tuple[Any, dict[tuple[str | int, ...], int]]:
    header: Any = None
    events: list[Any] = []
    append = events.append
    lines: dict[tuple[str | int, ...], int] = {}
    # LF only (a CR before it is JSON whitespace): U+2028, U+2029 and U+0085 are
    # text inside a string, not line ends.
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = _json_line(raw, _header_pairs if header is None else None)
        except json.JSONDecodeError as exc:
            raise SessionError(source, f"not valid JSON: {exc.msg}", line=number) from None
        except _Duplicate as exc:
            raise SessionError(
                source, "duplicate key", line=number, field=path_text((str(exc),))
            ) from None
        except ValueError as exc:
            raise SessionError(source, _number_message(exc), line=number) from None
        if header is not None:
            lines["events", len(events)] = number
            append(value)
            continue
        if not isinstance(value, dict):
            raise SessionError(
                source,
                f"expected the header object {{format, session}}, found {kind_of(value)}",
                line=number,
            )
        header = value
        lines[()] = number
        for key in value:
            lines[(key,)] = number
    if header is None:
        raise SessionError(source, "the file is empty; expected a header line and events")
    if "events" in header:
        raise SessionError(
            source, "events go one per line after the header, not inside it", line=lines[()]
        )
    return {**header, "events": events}, lines


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {json.dumps(shown)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
