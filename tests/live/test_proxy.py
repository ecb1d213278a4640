"""The proxy between the official SDKs and a fake provider on loopback: both APIs, streamed
and not, bytes unchanged, every exchange logged, failures answered, secrets never written."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from fake_upstream import FakeUpstream
from proxy_process import RunningProxy, running_proxy
from sdks import Lazy

from scripts.app_server import free_port

if TYPE_CHECKING:
    import anthropic
    import openai
else:
    anthropic, openai = Lazy("anthropic"), Lazy("openai")

SYSTEM = [
    {
        "type": "text",
        "text": "You answer questions about the fake upstream. " * 200,
        "cache_control": {"type": "ephemeral"},
    }
]


@pytest.fixture(scope="module")
def proxy(
    upstream: FakeUpstream, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningProxy]:
    log = tmp_path_factory.mktemp("proxy") / "log.jsonl"
    with running_proxy(upstream.url, log, "--timeout", "1") as running:
        yield running


def tagged(proxy: RunningProxy, tag: str, n: int = 1) -> list[dict[str, Any]]:
    """The log lines of the requests sent with ``x-test: tag``, once ``n`` are written."""
    deadline = time.monotonic() + 20
    while True:
        got = [x for x in proxy.lines() if x["request"]["headers"].get("x-test") == tag]
        if len(got) >= n or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def claude(proxy: RunningProxy, tag: str, key: str = "sk-ant-test") -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key=key, base_url=proxy.url, max_retries=0, default_headers={"x-test": tag}
    )


def gpt(proxy: RunningProxy, tag: str) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="sk-test",
        base_url=f"{proxy.url}/v1",
        max_retries=0,
        default_headers={"x-test": tag},
    )


def test_anthropic_sdk_plain_streamed_and_count_tokens(proxy: RunningProxy) -> None:
    client = claude(proxy, "anthropic")
    messages: list[Any] = [{"role": "user", "content": "hello"}]
    plain = client.messages.create(
        model="claude-sonnet-4-5", max_tokens=16, system=SYSTEM, messages=messages
    )
    assert plain.content[0].text == "Hello from the fake upstream."  # type: ignore[union-attr]
    assert plain.usage.cache_creation_input_tokens == 1800
    messages += [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "more"}]
    with client.messages.stream(
        model="claude-sonnet-4-5", max_tokens=16, system=SYSTEM, messages=messages
    ) as stream:
        assert "".join(stream.text_stream) == "Hello from the fake upstream."
        assert stream.get_final_message().usage.output_tokens == 7
    count = client.messages.count_tokens(model="claude-sonnet-4-5", messages=messages)
    assert count.input_tokens > 0

    lines = tagged(proxy, "anthropic", 3)
    by_kind = {
        (x["request"]["url"].endswith("count_tokens"), "body_raw" in x["response"]): x
        for x in lines
    }
    streamed = by_kind[(False, True)]
    assert streamed["response"]["body_raw"].startswith("event: message_start")
    assert streamed["response"]["headers"]["Content-Type"].startswith("text/event-stream")
    assert streamed["request"]["body"]["stream"] is True
    assert streamed["billed"]["write"] == 1800 and streamed["billed"]["output"] == 7
    assert by_kind[(False, False)]["response"]["body"]["type"] == "message"
    counted = by_kind[(True, False)]
    assert counted["response"]["body"] == {"input_tokens": count.input_tokens}
    assert "prediction" not in counted  # counting tokens touches no cache
    for x in lines:
        assert x["response"]["status_code"] == 200
        assert x["timing"]["end_ms"] >= x["timing"]["first_byte_ms"] > 0


def test_openai_sdk_responses_and_chat_plain_and_streamed(proxy: RunningProxy) -> None:
    _openai_round(proxy, "openai")


def _openai_round(proxy: RunningProxy, tag: str) -> None:
    client = gpt(proxy, tag)
    done = client.responses.create(model="gpt-5", input="hi")
    assert done.output_text == "Hello from the fake upstream."
    events = [e.type for e in client.responses.create(model="gpt-5", input="hi", stream=True)]
    assert events[0] == "response.created" and events[-1] == "response.completed"
    chat = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
    )
    assert chat.choices[0].message.content == "Hello from the fake upstream."
    chunks = list(
        client.chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == 1812

    lines = tagged(proxy, tag, 4)
    assert len(lines) == 4
    for x in lines:
        assert x["billed"] == x["billed"] | {"uncached": 1812, "read": 0, "write": 0, "output": 7}
        assert x["prediction"]["status"] in ("ready", "late")
    raw = [x["response"]["body_raw"] for x in lines if "body_raw" in x["response"]]
    assert len(raw) == 2
    assert any("event: response.completed" in r for r in raw)
    assert any(r.rstrip().endswith("data: [DONE]") for r in raw)


def _raw(url: str, body: bytes, tag: str) -> tuple[int, dict[str, str], bytes]:
    with httpx.Client(timeout=10) as http:
        r = http.post(
            url, content=body, headers={"content-type": "application/json", "x-test": tag}
        )
        return r.status_code, dict(r.headers), r.content


@pytest.mark.parametrize("stream", [False, True])
def test_bytes_pass_unchanged_both_ways(
    proxy: RunningProxy, upstream: FakeUpstream, stream: bool
) -> None:
    # odd spacing, key order and escapes: a proxy that re-encodes JSON would change them
    body = (
        b'{ "stream": %s,"model":"claude-sonnet-4-5" ,"max_tokens":5,'
        b'"messages":[{"role":"user","content":"caf\\u00e9 \xe2\x98\x95"}]}'
    ) % (b"true" if stream else b"false")
    tag = f"bytes-{stream}"
    status, _, through = _raw(f"{proxy.url}/v1/messages", body, tag)
    sent_upstream = upstream.seen[-1].body
    direct = _raw(f"{upstream.url}/v1/messages", body, tag)[2]
    assert status == 200
    assert sent_upstream == body
    assert through == direct


def test_other_paths_pass_through(proxy: RunningProxy, upstream: FakeUpstream) -> None:
    with httpx.Client() as http:
        r = http.get(f"{proxy.url}/v1/models?limit=2", headers={"x-test": "models"})
    assert r.status_code == 400  # the fake refuses a body that is not JSON, as an API would
    assert upstream.seen[-1].path == "/v1/models" and upstream.seen[-1].query == "limit=2"
    line = tagged(proxy, "models")[0]
    assert line["request"]["method"] == "GET" and "prediction" not in line


def test_secrets_are_never_written(proxy: RunningProxy, upstream: FakeUpstream) -> None:
    planted = "sk-ant-PLANTED-4242-do-not-log"
    client = anthropic.Anthropic(
        api_key=planted,
        base_url=proxy.url,
        max_retries=0,
        default_headers={
            "x-test": "secrets",
            "Cookie": f"session={planted}",
            "X-Gateway-Token": planted,
            "Proxy-Authorization": f"Basic {planted}",
        },
        default_query={"key": planted},
    )
    client.messages.create(
        model="claude-sonnet-4-5", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
    )
    gpt_client = openai.OpenAI(
        api_key=planted,
        base_url=f"{proxy.url}/v1",
        max_retries=0,
        default_headers={"x-test": "secrets"},
    )
    gpt_client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    tagged(proxy, "secrets", 2)
    # the upstream got the credentials as sent: redaction is for what the proxy writes
    assert any(planted in str(s.headers) for s in upstream.seen)
    assert upstream.seen[-2].headers.get("X-Gateway-Token") == planted
    written = proxy.log.read_bytes() + "\n".join(proxy.out + proxy.err).encode()
    assert planted.encode() not in written
    assert b"PLANTED" not in written
    line = tagged(proxy, "secrets")[0]
    headers = line["request"]["headers"]
    assert headers["Cookie"] == headers["X-Gateway-Token"] == "[redacted]"
    assert "key=%5Bredacted%5D" in line["request"]["url"]


def hello(client: anthropic.Anthropic, behaviour: str) -> None:
    """A one-line request the fake provider answers with ``behaviour``."""
    client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=5,
        messages=[{"role": "user", "content": "hi"}],
        extra_headers={"x-fake": behaviour},
    )


def test_upstream_error_status_reaches_the_client_and_is_logged(proxy: RunningProxy) -> None:
    with pytest.raises(anthropic.InternalServerError) as err:
        hello(claude(proxy, "fail-500"), "fail-500")
    assert err.value.status_code == 500
    line = tagged(proxy, "fail-500")[0]
    assert line["response"]["status_code"] == 500
    assert line["response"]["body"]["error"]["type"] == "api_error"


def test_upstream_timeout_is_a_clear_502(proxy: RunningProxy) -> None:
    with pytest.raises(anthropic.APIStatusError) as err:
        hello(claude(proxy, "slow"), "slow")
    assert err.value.status_code == 502
    assert "timed out" in str(err.value)
    line = tagged(proxy, "slow")[0]
    assert line["response"]["status_code"] == 502 and "timed out" in line["error"]


def test_refused_connection_is_a_clear_502(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with running_proxy(dead, tmp_path / "log.jsonl", "--no-predict", ready="proxy on") as p:
        client = gpt(p, "refused")
        with pytest.raises(openai.APIStatusError) as err:
            client.responses.create(model="gpt-5", input="hi")
        assert err.value.status_code == 502
        assert "refused or could not be reached" in str(err.value)
        line = p.wait_lines(1)[0]
    assert line["response"]["status_code"] == 502 and "refused" in line["error"]
    assert "summary: 1 exchanges (1 failed)" in "\n".join(p.out)


def stream_hello(client: anthropic.Anthropic, behaviour: str) -> None:
    """``hello``, streamed to its end."""
    with client.messages.stream(
        model="claude-sonnet-4-5",
        max_tokens=5,
        messages=[{"role": "user", "content": "hi"}],
        extra_headers={"x-fake": behaviour},
    ) as stream:
        for _ in stream:
            pass


def test_error_event_mid_stream_passes_through(proxy: RunningProxy) -> None:
    with pytest.raises(anthropic.APIStatusError) as err:
        stream_hello(claude(proxy, "midstream"), "midstream-error")
    assert "Overloaded" in str(err.value)
    line = tagged(proxy, "midstream")[0]
    assert "event: error" in line["response"]["body_raw"]


def test_upstream_dropping_mid_stream_breaks_the_clients_stream(proxy: RunningProxy) -> None:
    # the client sees the stream end short of its last chunk (the SDK's transport error)
    with pytest.raises(Exception, match="incomplete chunked read"):
        stream_hello(claude(proxy, "drop"), "drop")
    line = tagged(proxy, "drop")[0]
    assert "the upstream connection failed" in line["error"]
    assert line["response"]["body_raw"].startswith("event: message_start")


def test_client_hanging_up_mid_stream_is_logged_and_the_proxy_goes_on(proxy: RunningProxy) -> None:
    body = b'{"model":"claude-sonnet-4-5","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}'
    with socket.create_connection(("127.0.0.1", proxy.port)) as s:
        s.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"x-test: hangup\r\nx-fake: trickle\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        got = b""
        while b"message_start" not in got:
            got += s.recv(4096)
    line = tagged(proxy, "hangup")[0]
    assert "hung up" in line["error"]
    _openai_round(proxy, "after-hangup")  # still serving


def test_a_malformed_request_is_forwarded_as_it_is(
    proxy: RunningProxy, upstream: FakeUpstream
) -> None:
    body = b'{"model": "claude-sonnet-4-5", "messages": [oops'
    status, _, answer = _raw(f"{proxy.url}/v1/messages", body, "malformed")
    assert status == 400 and b"invalid_request_error" in answer
    assert upstream.seen[-1].body == body
    line = tagged(proxy, "malformed")[0]
    assert line["request"]["body_raw"] == body.decode()
    assert line["prediction"]["status"] == "none"


def test_no_open_proxy(proxy: RunningProxy, upstream: FakeUpstream) -> None:
    before = len(upstream.seen)
    with socket.create_connection(("127.0.0.1", proxy.port)) as s:
        s.sendall(b"CONNECT example.invalid:443 HTTP/1.1\r\nHost: example.invalid:443\r\n\r\n")
        assert s.recv(4096).startswith(b"HTTP/1.1 404")  # no tunnels
    assert len(upstream.seen) == before
    with socket.create_connection(("127.0.0.1", proxy.port)) as s:
        s.sendall(
            b"GET http://example.invalid/v1/models HTTP/1.1\r\nHost: example.invalid\r\n"
            b"Connection: close\r\n\r\n"
        )
        assert s.recv(4096).split(b" ")[1][:1] == b"4"  # refused: it names another host
    assert len(upstream.seen) == before


def _peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(x for x in status.splitlines() if x.startswith("VmHWM")).split()[1])


def test_a_long_stream_runs_in_bounded_memory(proxy: RunningProxy) -> None:
    before = _peak_rss_kib(proxy.proc.pid)
    body = b'{"model":"claude-sonnet-4-5","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}'
    size = 0
    with (
        httpx.Client(timeout=60) as http,
        http.stream(
            "POST",
            f"{proxy.url}/v1/messages",
            content=body,
            headers={"x-test": "long", "x-fake": "long-96", "content-type": "application/json"},
        ) as r,
    ):
        for chunk in r.iter_raw():
            size += len(chunk)
    assert size > 96 * 1024 * 1024 * 0.95
    line = tagged(proxy, "long")[0]
    assert len(line["response"]["body_raw"]) == size
    grown_mib = (_peak_rss_kib(proxy.proc.pid) - before) / 1024
    assert grown_mib < 24, f"the proxy grew by {grown_mib:.0f} MiB for a 96 MiB stream"
