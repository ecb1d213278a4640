"""The token-prefix simulator against a plain reference written from the rules.

The reference keeps one entry per prefix of segments (lines) and writes every
one of them on every request, exactly as the rules read; the simulator keeps
the latest request's prefixes lazily for speed. On random request sequences
(a growing history rewritten at its tail, idle gaps around the lifetimes,
prefixes shared by two sessions, model switches on one simulator, blocks sent
as a declared size) both must read and write the same tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.cache.rules import Retention
from assembler.cache.segmenter import Segmenter
from assembler.cache.store import CacheStore
from assembler.cache.token_prefix import TokenPrefixSimulator
from assembler.cache.tokenizers import counter
from assembler.design.layers import Layer, Placement
from assembler.design.wire import WireBlock

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


@dataclass
class _Entry:
    expires: float
    hard: float


class Reference:
    """Every prefix of segments is an entry; every request of at least the minimum
    writes (or refreshes) all of them; a read is the longest alive leading run."""

    def __init__(self, sim: TokenPrefixSimulator) -> None:
        self.sim = sim
        self.entries: dict[tuple[object, ...], _Entry] = {}

    def request(self, blocks: list[WireBlock], model: str, at: datetime) -> tuple[int, int, bool]:
        seg = Segmenter(counter("o200k_base"))
        now = at.timestamp()
        keys: list[tuple[object, ...]] = []
        cums: list[int] = []
        path: tuple[object, ...] = (model,)  # caches are separate per model
        running = 0
        for b in blocks:
            path += ("§" + b.section,)
            if b.declared_tokens is not None:  # content not recorded: one segment of its size
                segments = [(("declared", b.text, b.declared_tokens), b.declared_tokens)]
            else:
                lines, counts, _ = seg.block(b)
                segments = list(zip(lines, counts, strict=True))
            for segment, n in segments:
                path += (segment,)
                running += n
                keys.append(path)
                cums.append(running)
        # each entry ages from its own write: the read is the longest prefix whose entry lives
        matched, expired = 0, False
        for key, cum in zip(keys, cums, strict=True):
            e = self.entries.get(key)
            if e is None:  # never written: no longer prefix was either
                break
            if e.expires > now:
                matched, expired = cum, False
            else:
                expired = True
        minimum, unit = self.sim.minimum(model), self.sim.unit_for(model)
        floor = lambda n: 0 if n < minimum else n - n % unit  # noqa: E731
        read = floor(matched)
        write = max(0, floor(running) - read)
        if running >= minimum:
            ret = self.sim.retention_for(model)
            idle, age = ret.idle.total_seconds(), _age(ret)
            for key in keys:
                e = self.entries.get(key)
                if e is not None and e.expires > now:
                    e.expires = min(now + idle, e.hard)
                else:
                    self.entries[key] = _Entry(min(now + idle, now + age), now + age)
        return read, write, expired


def _age(ret: Retention) -> float:
    return 1e18 if ret.max_age == timedelta.max else ret.max_age.total_seconds()


def _line(i: int, variant: int) -> str:
    words = [WORDS[(i * 3 + k + variant) % len(WORDS)] for k in range(12)]
    return f"{i:03d} " + " ".join(words) + "\n"


GAPS = [1, 30, 299, 301, 599, 601, 1800, 3599, 3601, 86_399, 86_401]

# One request: extra history lines, lines of the history rewritten at its tail,
# whether the system prompt changed, seconds since the previous request, which
# session sends it, which model, and whether the history goes as a declared size
# (content not recorded) rather than as text.
STEP = st.tuples(
    st.integers(0, 6),
    st.integers(0, 3),
    st.booleans(),
    st.sampled_from(GAPS),
    st.integers(0, 1),
    st.integers(0, 1),
    st.sampled_from([False, False, False, True]),
)
MODELS = {"openai": ("gpt-4o", "gpt-5"), "deepseek": ("deepseek-chat", "deepseek-reasoner")}


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(
    steps=st.lists(STEP, min_size=1, max_size=25),
    provider=st.sampled_from(["openai", "deepseek"]),
    base=st.integers(60, 110),
    prefix=st.sampled_from([None, 300, 600]),
    system_size=st.sampled_from([200, 2400]),  # a short system prompt, or one split by lines
)
def test_simulator_reads_and_writes_what_the_reference_does(
    steps: list[tuple[int, int, bool, int, int, int, bool]],
    provider: str,
    base: int,
    prefix: int | None,
    system_size: int,
) -> None:
    store = CacheStore()
    unit = 64 if provider == "deepseek" else 1
    # two sessions on one store; each switches models on one simulator, as analyze does
    sims = [
        TokenPrefixSimulator(provider, Segmenter(counter("o200k_base")), unit=unit)
        for _ in range(2)
    ]
    ref = Reference(sims[0])
    at = datetime(2026, 3, 1, tzinfo=UTC)
    history = [(i, 0) for i in range(base)]
    text = "".join(_line(i, v) for i, v in history)
    head = "".join(_line(i, 0) for i in range(40))[:system_size]  # changes only at its tail
    made: dict[str, WireBlock] = {}

    @cache
    def systems(variant: int) -> str:
        return head + _line(99, variant)

    system_variant = 0
    for grow, rewrite, system_changed, gap, session, which, declared in steps:
        at += timedelta(seconds=gap)
        if rewrite:
            history = history[:-rewrite] + [(i, v + 1) for i, v in history[-rewrite:]]
        history += [(len(history) + k, 0) for k in range(grow)]
        if grow or rewrite:  # otherwise the very same text object goes again
            text = "".join(_line(i, v) for i, v in history)
        system_variant += system_changed
        model = MODELS[provider][which]
        wanted = [
            ("system", Layer.L0, Placement.SYSTEM, systems(system_variant), None),
            (
                "call_tree",
                Layer.L1,
                Placement.HISTORY,
                text,
                len(history) * 13 if declared else None,
            ),
            ("user_input", Layer.L2, Placement.USER_MESSAGE, f"step at {at}", None),
        ]
        if prefix is not None:
            wanted.insert(
                0,
                (
                    "unrecorded prefix",
                    Layer.L0,
                    Placement.SYSTEM,
                    "[not recorded]",
                    prefix + system_variant % 2,
                ),
            )
        # as the wire builder does: an unchanged block is the very object of the last step
        blocks = []
        for name, layer, placement, body, size in wanted:
            old = made.get(name)
            if old is None or old.text is not body or old.declared_tokens != size:
                cacheable = placement is not Placement.USER_MESSAGE
                old = made[name] = WireBlock(
                    name, layer, placement, body, cacheable, declared_tokens=size
                )
            blocks.append(old)
        got = sims[session].request(blocks, model, at, store)
        assert (got.read, got.write, got.expired) == ref.request(blocks, model, at)


def test_a_block_sent_first_as_a_declared_size_then_as_text_is_keyed_by_its_lines() -> None:
    """A declared block is one segment: the lines its text would have are not kept."""
    store = CacheStore()
    sim = TokenPrefixSimulator("openai", Segmenter(counter("o200k_base")))
    ref = Reference(sim)
    at = datetime(2026, 3, 1, tzinfo=UTC)
    short = "".join(_line(i, 0) for i in range(100))
    grown = short + "".join(_line(i, 0) for i in range(100, 110))
    user = WireBlock("user_input", Layer.L2, Placement.USER_MESSAGE, "go on", False)
    for text, size in [(short, None), (short, 1500), (grown, None), (grown, None)]:
        at += timedelta(seconds=10)
        block = WireBlock(
            "call_tree", Layer.L1, Placement.HISTORY, text, True, declared_tokens=size
        )
        got = sim.request([block, user], "gpt-4o", at, store)
        assert (got.read, got.write, got.expired) == ref.request([block, user], "gpt-4o", at)


def test_images_inside_the_read_are_left_out_of_it_whether_kept_or_new() -> None:
    """An image block the read passes through is billed uncached (``uncounted_kinds``):
    one in the blocks kept from the previous request and one that request added."""
    store = CacheStore()
    sim = TokenPrefixSimulator("openai", Segmenter(counter("o200k_base")))
    at = datetime(2026, 3, 1, tzinfo=UTC)

    def declared(name: str, size: int) -> WireBlock:
        return WireBlock(name, Layer.L1, Placement.HISTORY, name, True, declared_tokens=size)

    history = [
        declared("policy", 2048),
        declared("messages[0] input_image", 256),
        declared("messages[1] text", 1024),
    ]
    first = sim.request(history, "gpt-4o", at, store)
    assert (first.read, first.write) == (0, 3328)
    history += [declared("messages[2] text", 512), declared("messages[3] input_image", 256)]
    second = sim.request(history, "gpt-4o", at + timedelta(seconds=10), store)
    # 3,328 matched (a multiple of 128) less the first image; the new one lies past the read
    assert (second.read, second.write) == (3328 - 256, 768)
    assert second.block_cache == ("read", "uncached", "read", "write", "write")
    history.append(declared("messages[4] text", 128))
    third = sim.request(history, "gpt-4o", at + timedelta(seconds=20), store)
    assert (third.read, third.write) == (4096 - 512, 128)
    assert third.block_cache == ("read", "uncached", "read", "read", "uncached", "write")
