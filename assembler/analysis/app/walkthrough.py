"""What the app says about a step's cache outcome, computed from the step's numbers.

The Learn page walks the design through four points of the bundled research
session. Its prose explains the design and states no cache outcome; every
sentence about what the cache did comes from :func:`cache_sentence` for the
lifetime shown (reading 9: the design's own timestamps put its fourth point 27
minutes after the third, so its "cache hit" there needs the 1-hour lifetime).
:func:`contradictions` checks any sentence against a step's numbers; the tests
run it over every sentence the Learn page and the step header say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assembler.analysis.engine import SessionAnalysis, StepAnalysis, duration_text

#: The bundled session the walkthrough uses, and the layouts of its two lifetimes.
SESSION = "research_agent"
LIFETIMES = (("5m", "seed"), ("1h", "seed-1h"))


@dataclass(frozen=True)
class Point:
    label: str  # the step label in the session
    title: str
    prose: str  # the design, no cache outcome


POINTS = (
    Point(
        "walk-1",
        "Everything in its layer",
        "The first walkthrough point shows every component. **L0** (blue) is what stays the "
        "same for the whole session: tools, identity, rules, skills, global memory, "
        "environment. **L1** (green) is the project and the session: project files and "
        "memory, the user profile, the bindings, then the date and the call tree. **L2** "
        "(orange) is this call only: the situation, the input and the output contract. The "
        "wire puts them in that order, so what changes least sits at the front, where a "
        "prefix cache can keep it. Breakpoints ①–④ sit after the tools, after L0, after the "
        "L1 project part (before the date) and after the call tree.",
    ),
    Point(
        "walk-2",
        "The tree grows by appending",
        "One level deeper, `seed_surveys` runs inside `literature`. `_lit_decide` has "
        "finished, so it now shows its key output instead of `status: running`, and the new "
        "running call is appended at the end of the tree. On Anthropic the call tree is one "
        "block, so a tree that differs from the one last sent is sent whole again after "
        "breakpoint ③; this call's tree is the one the call before it, also inside "
        "`seed_surveys`, already sent.",
    ),
    Point(
        "walk-3",
        "io release",
        "Back in the main loop, `literature` has finished. Its subtree is *released*: the "
        "finished children collapse to one line each (`{function: …, status: done}`) and "
        "`literature` keeps only its key output. The tree gets shorter, so the call-tree "
        "block changes. Context length follows call depth, not step count.",
    ),
    Point(
        "walk-4",
        "Deep recursion, and the lifetime it needs",
        "Round two goes five levels down, to `check_novelty` inside `generate_ideas` inside "
        "`idea`. The running path is shown in full; finished work stays collapsed. The "
        "design's text expects L0 to be reused here, but its own timestamps put this call "
        "long after the one before it, so what the cache does depends on the lifetime.",
    ),
)


def cache_sentence(step: StepAnalysis, ttl: str) -> str:
    """What the cache did at ``step``, in words, from its numbers alone."""
    total = step.tokens.get("total", 0)
    head = f"With a {ttl} lifetime, "
    if step.read == 0 and step.write == 0:
        text = f"nothing is read from the cache and nothing is written: all {total:,} tokens are sent uncached."
    else:
        read = (
            f"{step.read:,} of {total:,} tokens are read from the cache ({step.hit_ratio:.0%})"
            if step.read
            else f"nothing is read from the cache (0 of {total:,} tokens)"
        )
        write = f"{step.write:,} are written to it" if step.write else "nothing is written"
        text = f"{read}, {write}, {step.uncached:,} are sent uncached."
    miss = f" {step.miss.sentence}" if step.miss is not None else ""
    return head + text + miss


def gap_sentence(analysis: SessionAnalysis, index: int) -> str:
    """How long the call waited after the one before it (what a lifetime is measured against)."""
    if index == 0:
        return "This is the first call of the session."
    gap = analysis.steps[index].timestamp - analysis.steps[index - 1].timestamp
    return f"It comes {duration_text(gap)} after the call before it."


def learn_points(analyses: dict[str, SessionAnalysis]) -> list[tuple[str, str, list[str]]]:
    """(label, title, sentences) per walkthrough point: the prose, then the computed lines.

    ``analyses`` maps a lifetime to the research session analysed under it; the
    last point shows every lifetime, the others the first.
    """
    first = next(iter(analyses.values()))
    index = {s.label: i for i, s in enumerate(first.steps) if s.label}
    out = []
    for point in POINTS:
        i = index.get(point.label)
        if i is None:
            continue
        lines = [point.prose]
        if point is POINTS[-1]:
            lines.append(gap_sentence(first, i))
            lines += [cache_sentence(a.steps[i], ttl) for ttl, a in analyses.items()]
        else:
            ttl, a = next(iter(analyses.items()))
            lines.append(cache_sentence(a.steps[i], ttl))
        out.append((point.label, point.title, lines))
    return out


def date_lines(midnight: SessionAnalysis | None, name: str) -> list[str]:
    """Why the date sits after breakpoint ③, with the midnight step's numbers when known."""
    lines = [
        "**Why the date sits at the tail of L1.** A date changes once a day. Placed in L0, the "
        "first call after midnight would change a block near the very front of the prompt and "
        "invalidate everything after it. At the tail of L1, after breakpoint ③ and before the "
        "call tree, the rollover loses only the date and what follows it."
    ]
    after = (
        next((s for s in midnight.steps if s.label == "after-midnight"), None) if midnight else None
    )
    if midnight is not None and after is not None:
        said = cache_sentence(after, midnight.ttl)
        lines.append(f"In `{name}`, at the first call after midnight: {said[0].lower()}{said[1:]}")
    lines.append(
        "The `date-in-l0` layout keeps the old placement so you can see the difference: compare "
        "it with `seed` on that session."
    )
    return lines


def header_sentence(step: StepAnalysis, first: bool) -> str:
    """The step view's one-line verdict under the metrics."""
    if step.miss is not None:
        return step.miss.sentence
    if first:
        if step.read:  # a recorded session can begin on a prefix an earlier request cached
            rest = f", and {step.write:,} are written" if step.write else ""
            return (
                f"First step: {step.read:,} tokens were already in the cache when the session "
                f"began, so they are read{rest}."
            )
        if step.write:
            return "First step: nothing is cached yet, so the request writes the prefix."
        return "First step: nothing is cached yet, and this request writes nothing to the cache."
    if step.read == 0:
        return "Nothing is read from the cache at this step."
    return "No miss: the cache kept every cacheable block it could."


_NUMBER = r"(\d[\d,]*)"
_HIT = re.compile(r"\b(cache hit|read from (the )?cache|still read|stays cached|is cheap)\b")
_NO_READ = re.compile(r"\b(nothing is read|nothing was read|full miss|nothing is cached)\b")
_NO_WRITE = re.compile(r"\bnothing is written\b|\bwrites nothing\b")
_WRITES = re.compile(r"\b(are written|is written|writes the prefix|written again|rewritten)\b")


def contradictions(sentence: str, step: StepAnalysis) -> list[str]:
    """What ``sentence`` claims about ``step``'s cache that its numbers contradict."""
    s = sentence.lower()
    found: list[str] = []
    if _NO_READ.search(s):
        if step.read:
            found.append(f"says nothing was read, but {step.read:,} tokens were read")
    elif _HIT.search(s) and step.read == 0:
        found.append("claims a cache hit, but nothing was read")
    if _NO_WRITE.search(s) and step.write:
        found.append(f"says nothing is written, but {step.write:,} tokens were written")
    elif _WRITES.search(s) and not _NO_WRITE.search(s) and step.write == 0:
        found.append("says tokens are written, but nothing was written")
    m = re.search(_NUMBER + r" of " + _NUMBER + r" tokens are read", s)
    if m and (_int(m.group(1)), _int(m.group(2))) != (step.read, step.tokens.get("total", 0)):
        found.append(f"says {m.group(1)} of {m.group(2)} read; the step read {step.read:,}")
    m = re.search(_NUMBER + r" are written", s)
    if m and _int(m.group(1)) != step.write:
        found.append(f"says {m.group(1)} written; the step wrote {step.write:,}")
    m = re.search(_NUMBER + r" are sent uncached", s)
    if m and _int(m.group(1)) != step.uncached:
        found.append(f"says {m.group(1)} uncached; the step sent {step.uncached:,}")
    m = re.search(r"\((\d+)%\)", s)
    if m and int(m.group(1)) != round(step.hit_ratio * 100):
        found.append(f"says {m.group(1)}%; the hit ratio is {step.hit_ratio:.0%}")
    return found


def _int(text: str) -> int:
    return int(text.replace(",", ""))
