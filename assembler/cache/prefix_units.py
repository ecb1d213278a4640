"""DeepSeek V4's cache: independent prefix units, read only on a full unit match.

A request stores a unit at the end of its input; the next request that carries
the model's answer right after that input finds a unit at the end of the answer
(the end of the model output); where a request diverges from the previous one,
the common prefix becomes a unit (A+B then A+C stores A, so A+D reads A). A read
is the longest stored unit the request fully contains: no partial unit, no
rounding. Fixed-interval units in long content are not modelled while the rules
give no interval. Each rule is in ``cache_rules.yaml`` with its source.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from assembler.cache.rules import Retention, _default_retention, rules
from assembler.cache.segmenter import Segmenter
from assembler.cache.simulation import CacheResult, prefix_result
from assembler.cache.store import NEVER, CacheStore, common_length
from assembler.cache.token_prefix import TokenPrefixSimulator
from assembler.design.wire import WireBlock
from assembler.sessions.model import RequestSettings


class PrefixUnitSimulator(TokenPrefixSimulator):
    """DeepSeek V4 (``deepseek.generation: prefix_units`` in the rules)."""

    def __init__(self, segmenter: Segmenter, retention: Retention | None = None) -> None:
        super().__init__("deepseek", segmenter, retention=retention)
        interval = rules()["deepseek"]["prefix_units"]["fixed_interval_tokens"]
        self.interval = int(interval) if interval else 0
        self._last_at = 0.0  # when the previous request ran

    def request(
        self,
        blocks: Sequence[WireBlock],
        model: str,
        at: datetime,
        store: CacheStore,
        settings: RequestSettings | None = None,
    ) -> CacheResult:
        scope = store.scope("deepseek-units", model)
        now = at.timestamp()
        ret = self.retention or _default_retention("deepseek")
        minimum = self.minimum(model)
        prev_at, self._last_at = self._last_at, now
        continued = self._last.model is not None
        keyed = self._keys(blocks, model)
        sent = self._last
        keys, cums, block_tokens = sent.keys, sent.cums, sent.block_tokens
        before = keyed.keys_before
        # the previous request's keys: the ones kept, then the ones left behind
        known = keyed.known
        shared = known + common_length(keyed.gone, keys[known:]) if keyed.same_model else 0
        if continued and shared == before:
            # the previous request's answer, sent back right after its input, is a unit
            j = keyed.blocks_before
            while j < len(blocks) and blocks[j].role == "assistant":
                j += 1
            if j > keyed.blocks_before and cums[sent.ends[j - 1] - 1] >= minimum:
                scope.put(keys[sent.ends[j - 1] - 1], prev_at, ret)
        read, expired = 0, False
        # the longest unit fully matched: Scope.state inlined, as this walks every
        # segment back from the end until one is stored and readable
        expiry, readable = scope.expires.get, scope.ready.get
        for i in range(len(keys) - 1, -1, -1):
            expires = expiry(keys[i])
            if expires is None:
                continue
            if expires <= now:
                expired = True
            elif readable(keys[i], NEVER) < now:
                read = cums[i]
                scope.put(keys[i], now, ret)
                break
        total = cums[-1] if cums else 0
        units = [len(keys) - 1] if keys else []
        if continued and 0 < shared < min(len(keys), before):
            units.append(shared - 1)  # the common prefix of two diverging requests
        if self.interval:
            mark = self.interval
            for i, c in enumerate(cums):
                if c >= mark:
                    units.append(i)
                    mark = (c // self.interval + 1) * self.interval
        written = [i for i in units if cums[i] >= minimum and cums[i] > read]
        for i in written:
            scope.put(keys[i], now, ret)
        write = max((cums[i] for i in written), default=read) - read
        return prefix_result(
            block_tokens,
            read,
            write,
            total=total,
            minimum=minimum,
            expired=expired and read < total,
            cause="prefix_unit_mismatch" if shared and cums[shared - 1] > read else None,
        )
