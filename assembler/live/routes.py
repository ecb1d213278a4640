"""Where a request goes: the provider's API chosen by its path, or the configured upstream.

The target is always a configured base URL followed by the request's own path: the host a
client names (an absolute request target, a ``Host`` header) is never followed, so the proxy
cannot be used to reach anywhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

ANTHROPIC_API = "https://api.anthropic.com"
OPENAI_API = "https://api.openai.com"

# the APIs a prediction is made for; everything else is forwarded and recorded only
MESSAGES, CHAT, RESPONSES = "anthropic-messages", "openai-chat", "openai-responses"
COUNT_TOKENS = "anthropic-count-tokens"
PREDICTED = (MESSAGES, CHAT, RESPONSES)  # count_tokens touches no cache


class RouteError(ValueError):
    """A request the proxy will not forward (one line, sent back as the error)."""


def api_of(path: str) -> str | None:
    """The API a request path speaks, or ``None`` for any other path."""
    path = path.rstrip("/")
    if path.endswith("/messages/count_tokens"):
        return COUNT_TOKENS
    if path.endswith("/messages"):
        return MESSAGES
    if path.endswith("/chat/completions"):
        return CHAT
    if path.endswith("/responses"):
        return RESPONSES
    return None


def _is_anthropic(api: str | None, headers: Mapping[str, str]) -> bool:
    if api in (MESSAGES, COUNT_TOKENS):
        return True
    if api in (CHAT, RESPONSES):
        return False
    # another path (models, files, batches…): the client's own headers say whose it is
    return "anthropic-version" in headers or "x-api-key" in headers


@dataclass(frozen=True)
class Upstreams:
    """The bases the proxy forwards to; ``upstream`` set: every request goes there."""

    upstream: str | None = None

    def __post_init__(self) -> None:
        if self.upstream is not None:
            parts = urlsplit(self.upstream)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise RouteError(
                    f"--upstream: expected an http:// or https:// URL with a host, found "
                    f"{self.upstream!r}"
                )

    def base(self, path: str, headers: Mapping[str, str]) -> str:
        if self.upstream is not None:
            return self.upstream.rstrip("/")
        return ANTHROPIC_API if _is_anthropic(api_of(path), headers) else OPENAI_API

    def target(self, path_qs: str, headers: Mapping[str, str]) -> str:
        """The URL a request for ``path_qs`` (its path and query) is forwarded to."""
        if not path_qs.startswith("/"):
            raise RouteError(f"request target: expected a path starting with /, found {path_qs!r}")
        path = path_qs.split("?", 1)[0]
        base = self.base(path, headers)
        url = base + path_qs
        # a path such as //elsewhere/ must not change the host the base names
        if urlsplit(url).netloc != urlsplit(base).netloc:
            raise RouteError(f"request target: {path_qs[:100]!r} would leave the upstream host")
        return url

    def hosts(self) -> tuple[str, ...]:
        bases = (self.upstream,) if self.upstream else (ANTHROPIC_API, OPENAI_API)
        return tuple(b.rstrip("/") for b in bases if b)
