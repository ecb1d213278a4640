"""Secrets never leave the proxy: header values and URL parameters named like a credential
are replaced in place before anything is written to the log or the terminal."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "[redacted]"

# A name holding any of these is taken for a credential: x-api-key, authorization,
# cookie, set-cookie, x-amz-security-token, openai-api-key, a gateway's own secret…
_SECRET_WORDS = ("auth", "key", "token", "secret", "cookie", "password", "credential", "signature")


def is_secret(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def redacted_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers as one object, a repeated name's values joined, every secret redacted."""
    out: dict[str, str] = {}
    for name, value in headers:
        shown = REDACTED if is_secret(name) else value
        out[name] = f"{out[name]}, {shown}" if name in out else shown
    return out


def redacted_url(url: str) -> str:
    """``url`` with the value of every query parameter named like a credential redacted."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if not any(is_secret(k) for k, _ in pairs):
        return url
    query = urlencode([(k, REDACTED if is_secret(k) else v) for k, v in pairs])
    return urlunsplit(parts._replace(query=query))
