"""What one line of a request log says besides its bodies: whether the call failed, who
served it (from the URL's host, the response id and the model's spelling) and when."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlsplit

from assembler.limits import MAX_ID_CHARS, MAX_URL_CHARS, STATUS_CODES, clip, kind_of
from assembler.sessions.importers.records import Record, parse_time, platform_of, preview

_TIME_KEYS = ("timestamp", "time", "created_at", "startTime", "start_time")
STATUS_EXPECTED = f"expected an HTTP status code ({STATUS_CODES.start} to {STATUS_CODES.stop - 1})"


def shown(value: Any) -> str:
    """A value a message quotes: a short text or number as itself, else what it is."""
    if isinstance(value, str) and len(value) <= 40:
        return repr(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        text = repr(value)
        return text if len(text) <= 40 else f"a number of {len(text):,} characters"
    if isinstance(value, str):
        return f"a string of {len(value):,} characters"
    return kind_of(value)


def status_code(value: Any) -> int | None:
    """``value`` as an HTTP status code (a number, or its three digits as text); None when
    it is none."""
    if isinstance(value, str) and len(value) == 3 and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1000:
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value in STATUS_CODES:
        return value
    return None


def status(rec: Record) -> int | None:
    """The HTTP status the line records (``status`` or ``status_code``), if any; a value
    that is no status code is refused, naming the line and the field."""
    for key in ("status", "status_code"):
        value = rec.data.get(key)
        if value is None:
            continue
        code = status_code(value)
        if code is None:
            raise rec.fail(f"{key}: {STATUS_EXPECTED}, found {shown(value)}")
        return code
    return None


def url_problem(value: Any) -> str | None:
    """Why ``value`` is no URL a request was sent to, or None."""
    if not isinstance(value, str):
        return f"expected a URL, found {kind_of(value)}"
    if len(value) > MAX_URL_CHARS:
        return f"expected a URL of at most {MAX_URL_CHARS:,} characters, found {len(value):,}"
    try:
        urlsplit(value)
    except ValueError as exc:  # a bracketed host that does not close, …
        return f"expected a URL, found {clip(value)!r} ({exc})"
    return None


def check_url(rec: Record) -> None:
    """The line's ``url``, if it has one, is a URL (read later for its host and model)."""
    value = rec.data.get("url")
    why = None if value is None else url_problem(value)
    if why is not None:
        raise rec.fail(f"url: {why}")


def id_problem(value: Any) -> str | None:
    """Why ``value`` is no id that links records (a response id), or None."""
    if not isinstance(value, str):
        return f"expected an id, found {kind_of(value)}"
    if len(value) > MAX_ID_CHARS:
        return f"expected an id of at most {MAX_ID_CHARS:,} characters, found {len(value):,}"
    return None


def failure(rec: Record, response: Any) -> str | None:
    """Why a line's call failed (an error object, or no usage with a status of 400 or
    more; no response at all beside an error), or ``None`` for a call that was served.
    A failed call read nothing from the cache and wrote nothing to it."""
    code = status(rec)
    if response is None and (rec.data.get("error") or (code or 0) >= 400):
        err: Any = rec.data.get("error")
        return f"{code or 'no response'}" + (f": {preview(str(err))}" if err else "")
    if not isinstance(response, Mapping):
        return None
    error = response.get("error")
    if isinstance(error, Mapping) or response.get("type") == "error":
        error = error if isinstance(error, Mapping) else {}
        what = " ".join(str(error[k]) for k in ("type", "message") if error.get(k))
        return f"{code or 'error'}" + (f": {preview(what)}" if what else "")
    if (code or 0) >= 400 and not isinstance(response.get("usage"), Mapping):
        return str(code)
    return None


@dataclass
class Failures:
    """Failed calls: skipped, counted, the first one described in one warning."""

    count: int = 0
    first: str = ""

    def add(self, rec: Record, why: str) -> None:
        if not self.count:
            self.first = f"line {rec.line}: {why}"
        self.count += 1

    def warnings(self) -> tuple[str, ...]:
        if not self.count:
            return ()
        calls = "call" if self.count == 1 else "calls"
        return (
            f"skipped {self.count} failed {calls}, which the cache did not see (first at "
            f"{self.first})",
        )


def _host(rec: Record) -> str:
    url = rec.data.get("url")
    return (urlsplit(url).hostname or "") if isinstance(url, str) else ""


def url_model(rec: Record) -> str | None:
    """The model a Bedrock or Vertex URL names (``/model/{id}/invoke``,
    ``…/models/{id}:rawPredict``): those requests' bodies carry none."""
    url = rec.data.get("url")
    if not isinstance(url, str):
        return None
    path = unquote(urlsplit(url).path)
    for marker in ("/model/", "/models/"):
        if marker in path:
            name = path.split(marker, 1)[1].split("/", 1)[0].split(":raw", 1)[0]
            return name or None
    return None


def provider(rec: Record, anthropic: bool, response: Mapping[str, Any], model: str) -> str:
    """Who served the call, named as the session format names it: the URL's host
    (Bedrock, Vertex, DeepSeek), else the response id's and the model's own spelling
    (as Claude Code's importer reads them), else the API's provider."""
    host = _host(rec)
    if anthropic:
        if "bedrock" in host:
            return "anthropic-bedrock"
        if host.endswith("aiplatform.googleapis.com"):
            return "anthropic-vertex"
        return platform_of(response, model)
    if host == "deepseek.com" or host.endswith(".deepseek.com"):
        return "deepseek"
    if not host and model.startswith("deepseek-"):
        return "deepseek"
    return "openai"


def _epoch(rec: Record, key: str, value: float) -> datetime:
    """Unix seconds or milliseconds, told apart by size (the years 1973 to 5138)."""
    if 1e8 <= value < 1e11:
        return datetime.fromtimestamp(value, tz=UTC)
    if 1e11 <= value < 1e14:
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    raise rec.fail(
        f"{key}: expected an ISO 8601 time or Unix seconds or milliseconds, found the number "
        f"{value!r}"
    )


def request_time(rec: Record, response: Mapping[str, Any]) -> datetime:
    for key in _TIME_KEYS:
        value = rec.data.get(key)
        if isinstance(value, str):
            return parse_time(value, rec)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return _epoch(rec, key, value)
    for key in ("created", "created_at"):  # OpenAI responses carry a Unix time
        value = response.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1e11:
            return datetime.fromtimestamp(value, tz=UTC)
    raise rec.fail(
        "timestamp: expected an ISO 8601 time on the line or a Unix created time in the response"
    )
