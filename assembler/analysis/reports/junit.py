"""JUnit XML for ``compare``: one test case per session, a failure past a threshold.

CI systems (GitHub Actions test reporters, GitLab, Jenkins) read this shape:

```xml
<testsuites tests="2" failures="1">
  <testsuite name="context-cache-gate" tests="2" failures="1" errors="0" time="…">
    <testcase classname="context-cache-gate.seed-vs-head" name="SESSION_ID (path)" time="…">
      <failure message="hit ratio drop 7.31 points > 2 …" type="threshold">…</failure>
    </testcase>
  </testsuite>
</testsuites>
```

A session that could not be compared (bad file, unknown model) is an
``<error>``. Text is escaped by ``xml.etree``; characters XML 1.0 forbids
(control characters) are replaced.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from assembler.analysis.advice import Comparison

SUITE = "context-cache-gate"
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class CaseResult:
    """One session compared (``comparison``) or not (``error``)."""

    path: str
    seconds: float
    comparison: Comparison | None = None
    error: str | None = None


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def threshold_message(c: Comparison, max_drop: float, max_increase: float) -> str | None:
    """The failure message when ``c`` passes a threshold, else None."""
    parts = []
    if c.hit_ratio_drop_points > max_drop:
        parts.append(
            f"hit ratio drop {c.hit_ratio_drop_points:.2f} points > {max_drop:g} "
            f"(base {c.base.totals['hit_ratio']:.1%}, head {c.head.totals['hit_ratio']:.1%})"
        )
    if c.cost_increase_percent > max_increase:
        parts.append(
            f"cost increase {c.cost_increase_percent:.2f} % > {max_increase:g} % "
            f"(base ${c.base.totals['usd']:.4f}, head ${c.head.totals['usd']:.4f})"
        )
    return "; ".join(parts) or None


def _details(c: Comparison) -> str:
    lines = [
        f"session {c.base.session} · {c.base.provider} {c.base.model}",
        f"base {c.base.layout}: hit ratio {c.base.totals['hit_ratio']:.2%}, "
        f"${c.base.totals['usd']:.4f}",
        f"head {c.head.layout}: hit ratio {c.head.totals['hit_ratio']:.2%}, "
        f"${c.head.totals['usd']:.4f}",
    ]
    if c.first_divergent_step is not None:
        who = f"{c.breaking_component} ({c.breaking_layer})" if c.breaking_component else "?"
        lines.append(f"first divergent step {c.first_divergent_step}; breaking component {who}")
    if c.sentence:
        lines.append(c.sentence)
    return "\n".join(lines)


def junit_xml(
    results: Sequence[CaseResult],
    max_drop: float,
    max_increase: float,
    *,
    suite: str = SUITE,
) -> str:
    """The XML document (UTF-8 declaration included) for ``results``."""
    failures = errors = 0
    total_time = sum(r.seconds for r in results)
    root = ET.Element("testsuites")
    ts = ET.SubElement(root, "testsuite", name=suite)
    for r in results:
        c = r.comparison
        session = c.base.session if c is not None else Path(r.path).stem
        classname = f"{suite}.{c.base.layout}-vs-{c.head.layout}" if c is not None else suite
        case = ET.SubElement(
            ts,
            "testcase",
            classname=_clean(classname),
            name=_clean(f"{session} ({r.path})"),
            time=f"{r.seconds:.3f}",
        )
        if c is None:
            errors += 1
            err = ET.SubElement(
                case, "error", message=_clean(r.error or "not compared"), type="error"
            )
            err.text = _clean(r.error or "")
            continue
        message = threshold_message(c, max_drop, max_increase)
        if message is not None:
            failures += 1
            fail = ET.SubElement(case, "failure", message=_clean(message), type="threshold")
            fail.text = _clean(_details(c))
        else:
            out = ET.SubElement(case, "system-out")
            out.text = _clean(_details(c))
    for el in (root, ts):
        el.set("tests", str(len(results)))
        el.set("failures", str(failures))
        el.set("errors", str(errors))
        el.set("time", f"{total_time:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path: Path, xml: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(xml, "utf-8")
