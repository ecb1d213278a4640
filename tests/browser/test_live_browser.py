"""The Live page in Debian's chromium, following a running proxy: requests sent through it
by the official SDK appear without a reload, and any of them opens as its step with the
diff against the request before."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anthropic
import pytest
from playwright.sync_api import expect

from tests.live.fake_upstream import FakeUpstream
from tests.live.proxy_process import running_proxy

pytestmark = pytest.mark.browser

SYSTEM = [
    {
        "type": "text",
        "text": "You are a patient agent. " * 300,
        "cache_control": {"type": "ephemeral"},
    }
]


def metric(tab: Any, label: str) -> Any:
    box = tab.locator('[data-testid="stMetric"]').filter(has_text=label)
    return box.locator('[data-testid="stMetricValue"]')


def test_requests_appear_as_they_pass_the_proxy(server: str, tab: Any, tmp_path: Path) -> None:
    upstream = FakeUpstream()
    log = tmp_path / "live.jsonl"
    try:
        with running_proxy(upstream.url, log, "--prediction-wait", "60") as proxy:
            tab.goto(f"{server}/Live?log={quote(str(log))}")
            expect(tab.get_by_text("holds no exchange yet", exact=False)).to_be_visible()
            client = anthropic.Anthropic(api_key="sk-ant-test", base_url=proxy.url, max_retries=0)
            messages: list[Any] = [{"role": "user", "content": "first"}]
            client.messages.create(
                model="claude-sonnet-4-5", max_tokens=8, system=SYSTEM, messages=messages
            )
            expect(metric(tab, "Requests")).to_have_text("1")
            messages += [
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "next"},
            ]
            with client.messages.stream(
                model="claude-sonnet-4-5", max_tokens=8, system=SYSTEM, messages=messages
            ) as stream:
                stream.until_done()
            expect(metric(tab, "Requests")).to_have_text("2")  # no reload in between
            expect(tab.locator('[data-testid="stDataFrame"]')).to_be_visible()
            expect(metric(tab, "Billed")).not_to_have_text("$0.0000")
            # the latest request as its step, a tool added before it: the miss and the diff
            messages += [
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "and now?"},
            ]
            client.messages.create(
                model="claude-sonnet-4-5",
                max_tokens=8,
                system=SYSTEM,
                messages=messages,
                tools=[
                    {"name": "grep", "description": "Searches.", "input_schema": {"type": "object"}}
                ],
            )
            expect(metric(tab, "Requests")).to_have_text("3")
            picker = tab.get_by_role("combobox", name="Request")
            # the newest, followed once predicted: the predicting worker runs at nice 19, so on
            # a CPU saturated by the unit tests beside this run it can lag well behind the row
            expect(picker).to_have_value(re.compile("^#3 · "), timeout=120_000)
            expect(tab.get_by_text("Step 3 of session", exact=False)).to_be_visible()
            block = tab.get_by_role("combobox", name="Block")
            expect(block).to_have_value("tools[0] grep")  # the changed block first
            diff = tab.locator(".cai-diff")
            expect(diff).to_contain_text("Searches.")
            # an earlier request, picked: its own step
            picker.click()
            tab.get_by_role("option", name="#1 ·", exact=False).click()
            expect(tab.get_by_text("Step 1 of session", exact=False)).to_be_visible()
    finally:
        upstream.close()
