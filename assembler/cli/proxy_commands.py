"""``proxy``: the live recording proxy."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from assembler.errors import UsageError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "proxy",
        help="a local recording proxy that predicts each request's cache outcome (docs/live.md)",
    )
    p.add_argument("--port", type=int, default=8787)
    p.add_argument("--log", default="proxy-log.jsonl", help="the capture log (appended)")
    p.add_argument(
        "--upstream",
        help="forward every request here (default: the provider's API, chosen by the path)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on; anything but loopback is reachable by others",
    )
    p.add_argument("--no-predict", action="store_true", help="record only, predict nothing")
    p.add_argument(
        "--timeout", type=float, default=600.0, help="seconds the upstream may stay silent"
    )
    p.add_argument(
        "--prediction-wait",
        type=float,
        default=2.0,
        help="seconds a line waits after its response for the prediction (then: late)",
    )
    p.set_defaults(run=cmd_proxy)


def cmd_proxy(args: argparse.Namespace) -> int:
    from assembler.live import ProxyConfig, RouteError, Upstreams, is_loopback, serve

    if not 0 < args.port < 65536:
        raise UsageError(f"--port: expected a port from 1 to 65535, found {args.port}")
    if args.timeout <= 0:
        raise UsageError(f"--timeout: expected a positive number of seconds, found {args.timeout}")
    if args.prediction_wait < 0:
        raise UsageError(
            f"--prediction-wait: expected 0 or more seconds, found {args.prediction_wait}"
        )
    try:
        upstreams = Upstreams(args.upstream)
    except RouteError as exc:
        raise UsageError(str(exc)) from None
    if not is_loopback(args.host):
        print(
            f"warning: listening on {args.host}, not loopback: anyone who can reach this "
            "address can send requests through the proxy; prefer 127.0.0.1",
            file=sys.stderr,
        )
    config = ProxyConfig(
        log=Path(args.log),
        host=args.host,
        port=args.port,
        upstreams=upstreams,
        predict=not args.no_predict,
        read_timeout=args.timeout,
        prediction_wait=args.prediction_wait,
    )
    try:
        serve(config)
    except OSError as exc:
        raise UsageError(f"--port {args.port}: cannot listen on {args.host}: {exc}") from None
    return 0
