"""The token-prefix simulators against the copies they replaced.

The simulators (OpenAI before and from GPT-5.6, Gemini, DeepSeek before and
from V4) cut and extend their key lists in place at a request's first change,
and a scope's path keeps its own keys and chunked hard limits; the reference
(``reference_*.py`` here) copied the previous request's keys at every request
and handed them to the store. On random request sequences (a history growing,
rewritten at its tail and compacted, a changing system prompt, answers and
images, declared sizes, explicit breakpoints, prompt_cache_key and retention
changes, model switches, two sessions on one store, parallel requests, the
engine's replay of the previous request with its answer, and idle gaps around
every lifetime) both must give the very same result for every request.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.cache import store as store_module
from assembler.cache.providers import simulator
from assembler.cache.segmenter import Segmenter
from assembler.cache.simulation import CacheResult, Simulator
from assembler.cache.store import CacheStore
from assembler.cache.tokenizers import counter
from assembler.design.layers import Layer, Placement
from assembler.design.wire import WireBlock
from assembler.sessions.model import RequestSettings
from tests.cache import reference_store
from tests.cache.reference_breakpoints import reference_simulator
from tests.cache.reference_token_prefix import TokenPrefixSimulator as ReferenceSimulator

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
MODELS = {
    "openai": ("gpt-4o", "gpt-4.1", "gpt-5.6"),
    "deepseek": ("deepseek-chat", "deepseek-reasoner", "deepseek-v4-flash"),
    "gemini": ("gemini-2.5-flash", "gemini-2.5-pro", "gemini-3-flash-preview"),
}
# around every lifetime: 5m, 10m idle, 30m, 1h, 24h; 0 is a parallel request
GAPS = [0, 1, 30, 120, 299, 301, 599, 601, 1800, 3599, 3601, 86_399, 86_401]
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def _line(i: int, variant: int) -> str:
    words = [WORDS[(i * 3 + k + variant) % len(WORDS)] for k in range(12)]
    return f"{i:03d} " + " ".join(words) + "\n"


@cache
def _system(size: int, variant: int) -> str:
    head = "".join(_line(i, 0) for i in range(60))[:size]  # changes only at its tail
    return head + _line(999, variant)


@dataclass(frozen=True)
class Step:
    grow: int  # history lines added
    rewrite: int  # history lines rewritten at its tail
    compact: bool  # the history loses its first half
    system_changed: bool
    gap: int  # seconds since the previous request
    session: int
    model: int
    declared: bool  # the history goes as a declared size (content not recorded)
    answer: bool  # the previous request's answer joins the messages
    image: bool  # and an image with it
    replay: bool  # the engine first replays the previous request with its answer
    key: str | None  # prompt_cache_key
    retention: str | None
    explicit: bool  # GPT-5.6 explicit mode, with breakpoints on the system and history
    rebuild: bool  # every block made anew, the same texts as new objects


STEP = st.builds(
    Step,
    grow=st.sampled_from([0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]),
    rewrite=st.integers(0, 3),
    compact=st.sampled_from([False] * 12 + [True]),
    system_changed=st.sampled_from([False] * 4 + [True]),
    gap=st.sampled_from(GAPS + [30, 120, 299, 599] * 3),  # mostly a session kept warm
    session=st.integers(0, 1),
    model=st.sampled_from([0] * 10 + [1, 2]),
    declared=st.sampled_from([False] * 6 + [True]),
    answer=st.booleans(),
    image=st.sampled_from([False] * 3 + [True]),
    replay=st.sampled_from([False] * 3 + [True]),
    key=st.sampled_from([None] * 20 + ["a", "b"]),
    retention=st.sampled_from([None] * 12 + ["in_memory", "24h"]),
    explicit=st.sampled_from([False] * 4 + [True]),
    rebuild=st.sampled_from([False] * 5 + [True]),
)


@dataclass
class _Session:
    """One session's simulators (the in-place one and its reference) and its blocks."""

    new: Simulator
    ref: ReferenceSimulator
    made: dict[str, WireBlock] = field(default_factory=dict)
    messages: list[WireBlock] = field(default_factory=list)  # answers and images so far
    last: tuple[list[WireBlock], datetime, str] | None = None  # blocks, time, model

    def block(
        self,
        name: str,
        placement: Placement,
        body: str,
        size: int | None = None,
        mark: int | None = None,
        role: str = "user",
    ) -> WireBlock:
        """As the wire builder does: an unchanged block is the very object of the last step."""
        old = self.made.get(name)
        if (
            old is None
            or old.text is not body
            or old.declared_tokens != size
            or old.breakpoint != mark
        ):
            layer = {Placement.TOOLS: Layer.L0, Placement.SYSTEM: Layer.L0}.get(placement, Layer.L1)
            old = self.made[name] = WireBlock(
                name,
                layer,
                placement,
                body,
                placement is not Placement.USER_MESSAGE,
                breakpoint=mark,
                declared_tokens=size,
                role=role,
            )
        return old


@contextmanager
def _chunk(size: int) -> Iterator[None]:
    """Paths' hard limits in chunks of ``size`` keys (small ones put chunk edges everywhere)."""
    before = store_module.CHUNK
    store_module.CHUNK = size
    try:
        yield
    finally:
        store_module.CHUNK = before


def _run(
    provider: str,
    steps: list[Step],
    base: int,
    system_size: int,
    ttl: str | None,
    warm: int | None = None,
) -> list[tuple[CacheResult, CacheResult]]:
    """Every request of ``steps`` through both, as (in-place result, reference result);
    ``warm``: no gap longer than that many seconds."""
    store, ref_store = CacheStore(), reference_store.CacheStore()
    sessions = [
        _Session(
            simulator(provider, Segmenter(counter("o200k_base")), ttl),
            reference_simulator(provider, Segmenter(counter("o200k_base")), ttl),
        )
        for _ in range(2)
    ]
    results: list[tuple[CacheResult, CacheResult]] = []

    def send(
        s: _Session,
        blocks: list[WireBlock],
        model: str,
        at: datetime,
        request: RequestSettings | None,
    ) -> None:
        got = s.new.request(blocks, model, at, store, request)
        want = s.ref.request(blocks, model, at, ref_store, request)  # type: ignore[arg-type]
        results.append((got, want))

    at = T0
    history = [(i, 0) for i in range(base)]
    text = "".join(_line(i, v) for i, v in history)
    variant = 0
    for n, step in enumerate(steps):
        at += timedelta(seconds=min(step.gap, warm or step.gap))
        s = sessions[step.session]
        if step.compact:
            history = history[len(history) // 2 :]
        if step.rewrite:
            history = history[: -step.rewrite] + [(i, v + 1) for i, v in history[-step.rewrite :]]
        history += [(history[-1][0] + 1 + k if history else k, 0) for k in range(step.grow)]
        if step.grow or step.rewrite or step.compact or step.rebuild:
            text = "".join(_line(i, v) for i, v in history)  # else the very same object again
        if step.rebuild:
            s.made.clear()
            s.messages = [
                s.block(b.name, b.placement, b.text, b.declared_tokens, role=b.role)
                for b in s.messages
            ]
        variant += step.system_changed
        model = MODELS[provider][step.model]
        answer = None
        if step.answer and s.last is not None:
            k = len(s.messages)
            body = f"answer {k} at {at}\n" * 3
            answer = s.block(f"messages[{k}] text", Placement.HISTORY, body, role="assistant")
            s.messages.append(answer)
            if step.image:
                s.messages.append(
                    s.block(f"messages[{k + 1}] input_image", Placement.HISTORY, "[image]", 256)
                )
        blocks = [
            s.block("tools", Placement.TOOLS, "read_file, write_file, run\n"),
            s.block(
                "system",
                Placement.SYSTEM,
                _system(system_size, variant),
                mark=1 if step.explicit else None,
            ),
            s.block(
                "call_tree",
                Placement.HISTORY,
                text,
                len(history) * 13 if step.declared else None,
                mark=2 if step.explicit and n % 2 else None,
            ),
            *s.messages,
            s.block("user_input", Placement.USER_MESSAGE, f"step {n}"),
        ]
        request = RequestSettings(
            prompt_cache_key=step.key,
            retention=step.retention,
            cache_mode="explicit" if step.explicit else None,
        )
        if step.replay and s.last is not None and answer is not None:
            # the previous request and its answer, at the previous request's time
            before, when, last_model = s.last
            if last_model == model:
                send(s, [*before, answer], model, when, None)
        send(s, blocks, model, at, request)
        s.last = (blocks, at, model)
    return results


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(STEP, min_size=12, max_size=40),
    provider=st.sampled_from(sorted(MODELS)),
    base=st.integers(40, 260),
    system_size=st.sampled_from([200, 2400]),  # a short system prompt, or one split by lines
    ttl=st.sampled_from([None, None, "1h"]),
    chunk=st.sampled_from([1, 3, 64]),
    warm=st.sampled_from([None, 550, 550]),  # 550: kept warm past OpenAI's 1h hard limit
)
def test_in_place_simulators_give_what_the_copying_ones_gave(
    steps: list[Step],
    provider: str,
    base: int,
    system_size: int,
    ttl: str | None,
    chunk: int,
    warm: int | None,
) -> None:
    with _chunk(chunk):
        results = _run(provider, steps, base, system_size, ttl, warm)
    for got, want in results:
        assert got == want


def test_a_session_warm_past_the_hard_limit_renews_only_the_passed_limits() -> None:
    """Four hours of requests at most ten minutes apart on OpenAI's in-memory cache
    (idle 10m, at most 1h): the oldest entries pass their hard limit while the path
    is alive, request after request, in chunks of one key, a few, or many; now and
    then the system prompt's tail changes or the history is compacted, so a read
    ends inside the oldest part of the path."""
    gaps = [60, 299, 599, 1, 0, 120, 450]
    steps = [
        Step(
            grow=3 + i % 5,
            rewrite=i % 3,
            compact=i % 70 == 69,
            system_changed=i % 25 == 24,
            gap=gaps[i % len(gaps)],
            session=0,
            model=0,
            declared=False,
            answer=i % 4 == 0,
            image=False,
            replay=i % 8 == 0,
            key=None,
            retention=None,
            explicit=False,
            rebuild=i % 30 == 29,
        )
        for i in range(230)
    ]
    renewed: list[int] = []
    renew = store_module._Limits.renew

    def counted(limits: store_module._Limits, now: float, limit: float, start: int) -> None:
        passed = sum(low <= now for low in limits.lows)
        renew(limits, now, limit, start)
        renewed.append(passed)

    for chunk in (1, 4, 64):
        renewed.clear()
        with _chunk(chunk), patch.object(store_module._Limits, "renew", counted):
            results = _run("openai", steps, 80, 200, None)
        for got, want in results:
            assert got == want
        # limits passed while the path was alive, in more than one request
        assert sum(n > 0 for n in renewed) > 1


# One change to a path's hard limits: add some, keep the first n, renew those
# passed at a time, or give them all one limit; then the time asked about.
LIMIT_OP = st.tuples(
    st.sampled_from(["extend", "cut", "renew", "fill"]),
    st.lists(st.integers(0, 12).map(float), max_size=20),
    st.integers(0, 40),
    st.integers(0, 12).map(float),
)


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(LIMIT_OP, max_size=25), chunk=st.sampled_from([1, 3, 64]))
def test_hard_limits_find_and_renew_what_a_plain_list_does(
    ops: list[tuple[str, list[float], int, float]], chunk: int
) -> None:
    """The chunked hard limits against a plain list: the same limits after every
    change, and the same first passed limit before any stop, at any time."""
    with _chunk(chunk):
        limits = store_module._Limits()
        plain: list[float] = []
        for op, values, n, now in ops:
            if op == "extend":
                limits.extend(list(values))
                plain += values
            elif op == "cut":
                limits.cut(min(n, len(plain)))
                del plain[n:]
            elif op == "renew":  # as a write does: from the first passed limit on
                first = next((i for i, h in enumerate(plain) if h <= now), len(plain))
                limits.renew(now, now + 20, first)
                plain = [h if h > now else now + 20 for h in plain]
            else:
                limits.fill(now + 20)
                plain = [now + 20] * len(plain)
            assert limits.values == plain
            for stop in range(len(plain) + 1):
                for at in (now - 1, now, now + 7, now + 21):
                    want = next((i for i in range(stop) if plain[i] <= at), stop)
                    assert limits.first_passed(at, stop) == want
