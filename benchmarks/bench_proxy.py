"""The latency the live proxy adds: time to first byte and to the end of a response, p50 and
p99, straight to a fake provider on loopback, through the proxy recording only, and through
the proxy predicting each request, side by side in one run.

Run: ``.venv/bin/python benchmarks/bench_proxy.py [--requests N]``. One growing Anthropic
conversation (a 6,000-token system prompt, a turn added per request), each request sent
plain and streamed to each target in turn. It measures and reports; it never fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "live")]

from fake_upstream import FakeUpstream  # type: ignore[import-not-found]  # noqa: E402
from proxy_process import running_proxy  # type: ignore[import-not-found]  # noqa: E402

SYSTEM = "You are a careful agent working through a long task, one step at a time. " * 400


def bodies(n: int) -> list[bytes]:
    messages: list[dict[str, Any]] = []
    out = []
    for i in range(n):
        messages.append({"role": "user", "content": f"step {i}: " + "look at this. " * 40})
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 64,
            "system": [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
            "messages": messages,
        }
        out.append(json.dumps(body).encode())
        messages.append({"role": "assistant", "content": f"done with step {i}"})
    return out


def timed(http: httpx.Client, url: str, body: bytes, stream: bool) -> tuple[float, float]:
    """Milliseconds to the first byte of the body and to its end."""
    if stream:
        body = body[:-1] + b', "stream": true}'
    started = time.perf_counter()
    first = 0.0
    with http.stream("POST", url, content=body, headers={"content-type": "application/json"}) as r:
        for _chunk in r.iter_raw():
            if not first:
                first = time.perf_counter()
    return (first - started) * 1000, (time.perf_counter() - started) * 1000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=150)
    args = parser.parse_args()
    upstream = FakeUpstream()
    sent = bodies(args.requests)
    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp)
        with (
            running_proxy(
                upstream.url, logs / "plain.jsonl", "--no-predict", ready="proxy on"
            ) as plain,
            running_proxy(upstream.url, logs / "predict.jsonl") as predicting,
        ):
            targets = {"direct": upstream.url, "proxy": plain.url, "proxy+predict": predicting.url}
            clients = {name: httpx.Client(timeout=60) for name in targets}
            for name in targets:
                results[name] = {
                    "plain first": [],
                    "plain end": [],
                    "stream first": [],
                    "stream end": [],
                }
            for body in sent:
                for stream in (False, True):
                    kind = "stream" if stream else "plain"
                    for name, base in targets.items():  # interleaved: the same load for each
                        first, end = timed(clients[name], f"{base}/v1/messages", body, stream)
                        results[name][f"{kind} first"].append(first)
                        results[name][f"{kind} end"].append(end)
            lines = predicting.wait_lines(2 * len(sent), timeout=300)
            for client in clients.values():
                client.close()
    upstream.close()
    ready = [x["prediction"] for x in lines if x.get("prediction", {}).get("status") == "ready"]
    print(f"{args.requests} requests, each plain and streamed, to each target (ms)")
    print(f"{'':<16}{'':>14}{'p50':>9}{'p99':>9}{'added p50':>11}{'added p99':>11}")
    for name, series in results.items():
        for what, values in series.items():
            direct = results["direct"][what]
            added = [v - d for v, d in zip(values, direct, strict=True)]
            extra = (
                ""
                if name == "direct"
                else f"{percentile(added, 0.5):>11.2f}{percentile(added, 0.99):>11.2f}"
            )
            p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
            print(f"{name:<16}{what:>14}{p50:>9.2f}{p99:>9.2f}{extra}")
    print(
        f"predictions ready within 2 s of their response: {len(ready)} of {len(lines)} "
        "(sent back to back, faster than the worker predicts)"
    )
    ms = prediction_times(sent)
    print(
        f"one prediction, the worker idle, over the growing conversation: p50 "
        f"{statistics.median(ms):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, last {ms[-1]:.1f} ms"
    )


def prediction_times(sent: list[bytes]) -> list[float]:
    """Milliseconds per prediction, each request answered before the next is sent."""
    from datetime import UTC, datetime

    from assembler.live.prediction import Predictor

    predictor = Predictor()
    predictor.warm()
    out = []
    for i, body in enumerate(sent):
        started = time.perf_counter()
        predictor.predict(
            i, "anthropic-messages", "http://127.0.0.1/v1/messages", datetime.now(UTC), body, {}
        )
        out.append((time.perf_counter() - started) * 1000)
        predictor.settle(i, 200, {"usage": {"input_tokens": 1, "output_tokens": 1}})
    return out


if __name__ == "__main__":
    main()
