"""The prediction of a request's cache outcome, from the sessions seen so far.

Each session keeps its requests as lines of a request log; a new request is predicted by
analysing that log with the request appended, unanswered: the last step is what ``analyze``
computes for the request when the log is read afterwards, by construction (its outcome
depends on the requests before it, never on its own response). An Anthropic session is
analysed from the cache its earlier requests left, two requests at a time (see
``_Session``). Runs in a worker process.
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from assembler.analysis.bill import billed_cost
from assembler.analysis.engine import StepAnalysis, analyze, builtin_layout
from assembler.cache.prices.pricing import price
from assembler.cache.store import CacheStore
from assembler.limits import one_line
from assembler.live.routes import MESSAGES, RESPONSES
from assembler.live.sessions import closest, session_hint
from assembler.sessions.importers.records import Record
from assembler.sessions.importers.request_logs.requests_lines import failure
from assembler.sessions.importers.request_logs.requests_log import (
    BUILDERS,
    measured,
    requests_session,
)
from assembler.sessions.importers.sizing import ScaleFit
from assembler.sessions.loader import parse_session
from assembler.sessions.model import Usage

_LAYOUT = builtin_layout("seed")  # read once: a recorded request is replayed under it


def _steps(session: _Session, lines: list[dict[str, Any]], store: CacheStore) -> list[StepAnalysis]:
    """``lines`` of ``session`` analysed as a request log, from the cache in ``store``, its
    sizes scaled to the bill as fitted so far."""
    source = f"live session {session.name}"
    records = [Record(i + 1, line, source) for i, line in enumerate(lines)]
    imported = requests_session(records, source, session.name[:200])
    scales = session.fit.scales()
    if scales:
        imported.data["session"]["token_scale"] = scales
    parsed = parse_session(json.dumps(imported.data), source, jsonl=False)
    return list(analyze(parsed, _LAYOUT, store=store).steps)


def _served(session: _Session, k: int) -> bool:
    """Whether line ``k`` was served: a failed call is not in the cache's history."""
    line = session.lines[k]
    return failure(Record(k + 1, line, session.name), line.get("response")) is None


_WARM_UP = (
    (MESSAGES, {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]}),
    (RESPONSES, {"model": "gpt-5", "input": "hi"}),
)


@dataclass
class _Session:
    name: str
    api: str
    lines: list[dict[str, Any]] = field(default_factory=list)
    answered: list[bool] = field(default_factory=list)  # per line: its response is known
    last_blocks: list[dict[str, Any]] = field(default_factory=list)
    # A Messages session keeps only the lines from its last answered, served one on,
    # with the cache the lines before left (``base``): the Anthropic simulator's outcome
    # depends on the store and the previous request only, so the last step of that
    # window is the whole analysis' step, and memory follows the window
    base: CacheStore = field(default_factory=CacheStore)
    steps_before: int = 0  # the served lines applied to ``base``: the window's steps follow
    dropped: int = 0  # lines applied to ``base``: line i is lines[i - dropped]
    # the cache after the last window's analysis, and the line it ended with (absolute)
    after: CacheStore | None = None
    after_line: int = -1
    # per model, the billed input against the input counted for the requests answered so far
    fit: ScaleFit = field(default_factory=ScaleFit)


@dataclass
class _Pending:
    session: _Session
    index: int  # of its line in the session
    api: str
    step: StepAnalysis | None
    scale: float  # the factor its sizes were counted at


def _fit(session: _Session, pending: _Pending, usage: Usage) -> None:
    """Add an answered request to its session's fit: what the provider billed for its
    input against what was counted for it (unscaled). The proxy sees the whole request,
    so whole inputs are compared, not the growth the transcript importers fit on."""
    step = pending.step
    billed = usage.input + usage.cache_read + usage.cache_write
    if step is None or billed <= 0:
        return
    session.fit.add_pair(step.model, billed, round(step.tokens["total"] / pending.scale))


def _miss(step: StepAnalysis) -> tuple[str | None, str | None]:
    m = step.miss
    return (None, None) if m is None else (f"{m.component} ({m.reason})", m.sentence)


class Predictor:
    """Sessions so far, and the requests awaiting their response, by exchange id."""

    def __init__(self) -> None:
        self.sessions: dict[str, _Session] = {}
        self._unnamed: dict[str, _Session] = {}  # sessions told apart by prefix only
        self._pending: dict[int, _Pending] = {}

    def _session_for(
        self, api: str, body: dict[str, Any], headers: dict[str, str], blocks: list[dict[str, Any]]
    ) -> _Session:
        hint = session_hint(body, headers)
        if hint is None:
            same_api = {n: s.last_blocks for n, s in self._unnamed.items() if s.api == api}
            name = closest(blocks, same_api)
            if name is not None:
                return self._unnamed[name]
            name = f"session-{len(self.sessions) + 1}"
            self._unnamed[name] = self.sessions[name] = _Session(name, api)
            return self.sessions[name]
        if hint not in self.sessions:
            self.sessions[hint] = _Session(hint, api)
        return self.sessions[hint]

    def warm(self) -> None:
        """Load the tokenizers and prices a first prediction needs, then forget it."""
        at = datetime.now(UTC)
        for api, body in _WARM_UP:
            self.predict(0, api, "http://127.0.0.1/", at, json.dumps(body).encode(), {})
        self.sessions.clear()
        self._unnamed.clear()
        self._pending.clear()

    def predict(
        self,
        exchange: int,
        api: str,
        url: str,
        at: datetime,
        body: bytes,
        headers: dict[str, str],
    ) -> dict[str, Any]:
        """The predicted read / write / uncached tokens and miss of a request, or why none."""
        started = time.perf_counter()
        try:
            request = json.loads(body)
        except ValueError:
            return {"status": "none", "why": "the request body is not JSON"}
        if not isinstance(request, dict):
            return {"status": "none", "why": "the request body is not a JSON object"}
        try:
            blocks = BUILDERS[api](request)
        except Exception as exc:  # a shape the reader cannot take: forwarded all the same
            return {"status": "failed", "why": one_line(f"{type(exc).__name__}: {exc}", 300)}
        session = self._session_for(api, request, headers, blocks)
        line = {
            "timestamp": at.isoformat(),
            "url": url,
            "request": request,
            "response": {},
            "status": 200,
        }
        session.lines.append(line)
        session.answered.append(False)
        try:
            step = self._analyse(session)
        except Exception as exc:  # e.g. no model: the provider will refuse it too
            session.lines.pop()
            session.answered.pop()
            if not session.lines:
                self.sessions.pop(session.name, None)
                self._unnamed.pop(session.name, None)
            return {"status": "failed", "why": one_line(f"{type(exc).__name__}: {exc}", 300)}
        session.last_blocks = blocks
        index = session.dropped + len(session.lines) - 1
        scale = session.fit.scales().get(step.model, 1.0)
        self._pending[exchange] = _Pending(session, index, api, step, scale)
        short, sentence = _miss(step)
        return {
            "status": "ready",
            "session": session.name,
            "step": session.steps_before + step.step,
            "model": step.model,
            "read": step.read,
            "write": step.write,
            "uncached": step.uncached,
            "total": step.tokens["total"],
            "miss": short,
            "miss_sentence": sentence,
            "usd_input": step.usd,
            "scale": scale,
            "ms": round((time.perf_counter() - started) * 1000, 2),
        }

    def _analyse(self, session: _Session) -> StepAnalysis:
        if session.api != MESSAGES:  # the whole session: OpenAI's cache reads past answers
            return _steps(session, session.lines, CacheStore())[-1]
        self._advance(session)
        store = copy.deepcopy(session.base)
        step = _steps(session, session.lines, store)[-1]
        session.after, session.after_line = store, session.dropped + len(session.lines) - 1
        return step

    @staticmethod
    def _advance(session: _Session) -> None:
        """Apply to ``base`` the lines before the latest answered, served line that follows
        only answered ones, and let them go: that line stays first, the previous request
        of the one after it."""
        lines, answered = session.lines, session.answered
        end = 0
        for k in range(len(lines)):
            if not answered[k]:
                break
            if k and _served(session, k):
                end = k
        if not end:
            return
        served = sum(_served(session, k) for k in range(end))
        if session.after is not None and session.after_line == session.dropped + end:
            # The last window ended with line ``end``, served: its cache is ``base`` with
            # the lines before it applied, and ``end`` itself, which the next window
            # applies again at the same instant; a request repeated at its own time
            # writes nothing new and refreshes nothing further, so that cache stands in
            # for the analysis of ``lines[:end]`` it would otherwise take (tested).
            session.base = session.after
        elif served:
            _steps(session, lines[:end], session.base)
        session.after = None
        session.steps_before += served
        del lines[:end], answered[:end]
        session.dropped += end

    def settle(self, exchange: int, status: int | None, response: dict[str, Any]) -> dict[str, Any]:
        """Record the response of a predicted request; its bill beside the prediction."""
        pending = self._pending.pop(exchange, None)
        if pending is None:
            return {}
        session = pending.session
        index = pending.index - session.dropped
        session.lines[index]["response"] = response
        session.lines[index]["status"] = status if status is not None else 502
        session.answered[index] = True
        got = measured(pending.api, response)
        if got is None or pending.step is None:
            return {}
        usage = Usage(**got)
        if session.lines[index]["status"] < 400:
            _fit(session, pending, usage)
        step = pending.step
        billed = billed_cost(replace(step, measured=usage))

        def priced(read: int, write: int) -> float:
            return price(
                step.platform or step.provider,
                step.model,
                total_input=step.tokens["total"],
                cache_read=read,
                cache_write=write,
                write_1h=step.write_ttl == "1h",
                output=usage.output,
                at=step.timestamp,
                context=step.price_context,
            )

        return {
            "read": usage.cache_read,
            "write": usage.cache_write,
            "write_1h": usage.cache_write_1h,
            "uncached": usage.input,
            "output": usage.output,
            "usd": billed,
            "simulated_usd": priced(step.read, step.write),
            "no_cache_usd": priced(0, 0),
        }
