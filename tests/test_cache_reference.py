"""The token-prefix simulator against a plain reference written from the rules.

The reference keeps one entry per prefix of segments (lines) and writes every
one of them on every request, exactly as the rules read; the simulator keeps
the latest request's prefixes lazily for speed. On random request sequences
(a growing history rewritten at its tail, idle gaps around the lifetimes,
prefixes shared by two sessions) both must read and write the same tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.cache import CacheStore, Retention, Segmenter, TokenPrefixSimulator
from assembler.layers import Layer, Placement
from assembler.tokens import counter
from assembler.wire import WireBlock

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


@dataclass
class _Entry:
    expires: float
    hard: float


class Reference:
    """Every prefix of segments is an entry; every request of at least the minimum
    writes (or refreshes) all of them; a read is the longest alive leading run."""

    def __init__(self, sim: TokenPrefixSimulator, model: str) -> None:
        self.sim, self.model = sim, model
        self.entries: dict[tuple[str, ...], _Entry] = {}

    def request(self, blocks: list[WireBlock], at: datetime) -> tuple[int, int, bool]:
        seg = Segmenter(counter("o200k_base"))
        now = at.timestamp()
        keys: list[tuple[str, ...]] = []
        cums: list[int] = []
        path: tuple[str, ...] = ()
        running = 0
        for b in blocks:
            lines, counts, _ = seg.block(b)
            path += ("§" + b.section,)
            for line, n in zip(lines, counts, strict=True):
                path += (line,)
                running += n
                keys.append(path)
                cums.append(running)
        matched, expired = 0, False
        for key, cum in zip(keys, cums, strict=True):
            e = self.entries.get(key)
            if e is None or e.expires <= now:
                expired = e is not None
                break
            matched = cum
        minimum, unit = self.sim.minimum(self.model), self.sim.unit_for(self.model)
        floor = lambda n: 0 if n < minimum else n - n % unit  # noqa: E731
        read = floor(matched)
        write = max(0, floor(running) - read)
        if running >= minimum:
            ret = self.sim.retention_for(self.model)
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

# One request: (extra history lines, lines of the history rewritten at its tail,
# whether the system prompt changed, seconds since the previous request, which session)
STEP = st.tuples(
    st.integers(0, 6),
    st.integers(0, 3),
    st.booleans(),
    st.sampled_from(GAPS),
    st.integers(0, 1),
)


@settings(max_examples=120, deadline=None)
@given(
    steps=st.lists(STEP, min_size=1, max_size=25),
    setup=st.sampled_from(
        [("openai", "gpt-4o"), ("openai", "gpt-5"), ("deepseek", "deepseek-chat")]
    ),
    base=st.integers(60, 110),
)
def test_simulator_reads_and_writes_what_the_reference_does(
    steps: list[tuple[int, int, bool, int, int]], setup: tuple[str, str], base: int
) -> None:
    provider, model = setup
    store = CacheStore()
    sims = [
        TokenPrefixSimulator(
            provider, Segmenter(counter("o200k_base")), unit=64 if provider == "deepseek" else 1
        )
        for _ in range(2)
    ]
    ref = Reference(sims[0], model)
    at = datetime(2026, 3, 1, tzinfo=UTC)
    history = [(i, 0) for i in range(base)]
    system_variant = 0
    for grow, rewrite, system_changed, gap, session in steps:
        at += timedelta(seconds=gap)
        if rewrite:
            history = history[:-rewrite] + [(i, v + 1) for i, v in history[-rewrite:]]
        history += [(len(history) + k, 0) for k in range(grow)]
        system_variant += system_changed
        blocks = [
            WireBlock("system", Layer.L0, Placement.SYSTEM, _line(0, system_variant) * 3, True),
            WireBlock(
                "call_tree",
                Layer.L1,
                Placement.HISTORY,
                "".join(_line(i, v) for i, v in history),
                True,
            ),
            WireBlock("user_input", Layer.L2, Placement.USER_MESSAGE, f"step at {at}", False),
        ]
        got = sims[session].request(blocks, model, at, store)
        assert (got.read, got.write, got.expired) == ref.request(blocks, at)
