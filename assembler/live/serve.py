"""Running the proxy: the worker first (forked before any thread starts), then the server."""

from __future__ import annotations

import ipaddress
import sys
from typing import TextIO

from aiohttp import web

from assembler.live.proxy import Proxy, ProxyConfig
from assembler.live.worker import PredictionWorker


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(config: ProxyConfig, out: TextIO | None = None) -> None:
    """Serve until interrupted; the summary is printed on the way out."""
    out = out if out is not None else sys.stdout
    worker = PredictionWorker() if config.predict else None
    proxy = Proxy(config, out, worker)
    hosts = ", ".join(config.upstreams.hosts())
    listening = f"proxy on http://{config.host}:{config.port} → {hosts}; log {config.log}" + (
        "" if worker else " (no predictions)"
    )

    def said_when_listening(_banner: str) -> None:  # run_app calls it once the port is bound
        print(listening, file=out, flush=True)

    try:
        web.run_app(
            proxy.app(),
            host=config.host,
            port=config.port,
            print=said_when_listening,
            shutdown_timeout=5.0,
            access_log=None,
        )
    finally:
        if worker is not None:
            worker.close()
