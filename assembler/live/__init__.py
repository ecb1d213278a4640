"""Live: a local recording proxy in front of the provider's API that predicts each
request's cache outcome beside the forward, and a reader for the log it writes.

Imports ``analysis`` and everything below it; only ``cli`` imports it.
"""

from assembler.live.follow import LiveRow, LiveTotals, LogFollower, live_totals
from assembler.live.proxy import Proxy, ProxyConfig
from assembler.live.redaction import REDACTED, redacted_headers, redacted_url
from assembler.live.routes import RouteError, Upstreams
from assembler.live.serve import is_loopback, serve

__all__ = [
    "REDACTED",
    "LiveRow",
    "LiveTotals",
    "LogFollower",
    "Proxy",
    "ProxyConfig",
    "RouteError",
    "Upstreams",
    "is_loopback",
    "live_totals",
    "redacted_headers",
    "redacted_url",
    "serve",
]
