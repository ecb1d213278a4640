"""HTML for the block stack and the call tree.

Every string that comes from a session or a layout goes through ``esc`` before
it touches markup: the page shows ``<script>`` as text, never runs it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

CIRCLED = "①②③④⑤⑥⑦⑧"

LAYER_COLOURS = {"L0": "#3b5bdb", "L1": "#2f9e44", "L2": "#e8590c"}
LAYER_NAMES = {
    "L0": "L0 · stable (identity, rules, tools)",
    "L1": "L1 · project and session",
    "L2": "L2 · this call",
}
CACHE_LABELS = {"read": "read", "write": "written", "uncached": "uncached"}
CACHE_ICONS = {"read": "●", "write": "✎", "uncached": "○"}


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>:~$&])")


def md(value: object) -> str:
    """Session text made inert for Streamlit markdown: no HTML, links, colours, icons or LaTeX."""
    text = " ".join(str(value).split())
    return _MD_SPECIAL.sub(r"\\\1", text)


def literal(value: object) -> str:
    """User text in an error or a toast: one line, as a Markdown code span, so it shows
    as typed. Escaping alone still lets a bare URL become a live link."""
    text = " ".join(str(value).split())
    ticks = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{ticks} {text} {ticks}"


STYLE = """
<style>
.cai-legend{display:flex;gap:.9rem;flex-wrap:wrap;font-size:.8rem;margin:.05rem 0 .3rem;color:#444}
.block-container{padding-top:2.2rem}
.cai-legend span{display:inline-flex;align-items:center;gap:.35rem}
.cai-sw{width:.8rem;height:.8rem;border-radius:2px;display:inline-block}
.cai-stack{font-size:.86rem;border:1px solid #e3e6ee;border-radius:8px;overflow:hidden}
.cai-row{display:grid;grid-template-columns:5px minmax(8rem,1.5fr) 2.2rem minmax(5rem,1fr) 5.6rem 6.2rem 2.4rem;
  align-items:center;gap:.55rem;padding:.26rem .6rem .26rem 0;border-top:1px solid #eef0f5;background:#fff}
.cai-row:first-child{border-top:none}
.cai-row.cai-head{background:#f6f7fb;font-weight:600;color:#555;font-size:.76rem;text-transform:uppercase;letter-spacing:.03em}
.cai-bar{align-self:stretch;border-radius:0}
.cai-name{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.83rem;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.cai-layer{font-weight:600;font-size:.78rem}
.cai-sec{color:#8a90a0;font-size:.72rem;font-family:sans-serif;margin-left:.35rem}
.cai-tok{display:flex;align-items:center;gap:.4rem}
.cai-tokbar{height:.5rem;border-radius:2px;min-width:2px;opacity:.55}
.cai-num{font-variant-numeric:tabular-nums;text-align:right;white-space:nowrap}
.cai-chip{display:inline-block;padding:.04rem .45rem;border-radius:999px;font-size:.74rem;white-space:nowrap;border:1px solid transparent}
.cai-read{background:#d3f9d8;color:#1b5e20;border-color:#8ce99a}
.cai-write{background:#fff3bf;color:#7a4f01;border-color:#ffd43b}
.cai-uncached{background:#f1f3f5;color:#555;border-color:#dee2e6}
.cai-new{background:#e7f5ff;color:#1c4f8a;border-color:#a5d8ff}
.cai-changed{background:#f3f0ff;color:#5f3dc4;border-color:#d0bfff}
.cai-unchanged{color:#868e96}
.cai-released{background:#fff5f5;color:#c92a2a;border-color:#ffc9c9}
.cai-section{padding:.12rem .6rem;background:#f6f7fb;color:#8a90a0;font-size:.7rem;text-transform:uppercase;letter-spacing:.06em;border-top:1px solid #eef0f5}
.cai-bp{font-size:1.05rem;color:#3b5bdb;text-align:center;white-space:nowrap}
.cai-bp small{font-size:.62rem}
.cai-prefix{display:flex;align-items:center;gap:.6rem;padding:.18rem .6rem;background:#edf2ff;
  border-top:2px dashed #3b5bdb;border-bottom:2px dashed #3b5bdb;color:#1c3faa;font-weight:600;font-size:.82rem}
.cai-prefix small{font-weight:400;color:#445}
.cai-tree{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.8rem;line-height:1.45;background:#fbfbfd;
  border:1px solid #e3e6ee;border-radius:8px;padding:.6rem .8rem;white-space:pre;overflow-x:auto;margin:0}
.cai-tree .t-tag{color:#999}
.cai-tree .t-running{color:#1c3faa;font-weight:600}
.cai-tree .t-current{background:#fff3bf;color:#1c3faa;font-weight:700}
.cai-tree .t-released{color:#aaa;text-decoration:line-through;text-decoration-color:#ccc}
.cai-tree .t-output{color:#2b8a3e}
.cai-tree .t-note{font-family:sans-serif;font-size:.72rem;color:#e8590c;font-weight:600}
.cai-tree .t-rnote{font-family:sans-serif;font-size:.72rem;color:#aaa}
.cai-indicator{font-size:1.35rem;font-weight:700;letter-spacing:.01em;margin:.15rem 0}
.cai-sub{color:#555;font-size:.9rem}
/* Narrow windows: the step view's two columns wrap (stack first, call tree below) when the
   block stack would be narrower than its columns; metric values shrink instead of being cut. */
.st-key-step_columns [data-testid="stHorizontalBlock"]{flex-wrap:wrap}
.st-key-step_columns [data-testid="stColumn"]:first-child{min-width:min(100%,33rem);flex:3 1 33rem}
.st-key-step_columns [data-testid="stColumn"]:last-child{min-width:16rem;flex:2 1 16rem}
[data-testid="stMetricValue"]{font-size:clamp(1.25rem,2.3vw,2.1rem)}
.st-key-prev button,.st-key-next button{white-space:nowrap;min-width:0;padding-left:.4rem;padding-right:.4rem}
.cai-approx{display:inline-block;background:#fff3bf;color:#7a4f01;border:1px solid #ffd43b;border-radius:4px;padding:0 .35rem;font-size:.74rem;font-weight:600}
</style>
"""


def legend() -> str:
    layers = "".join(
        f'<span><i class="cai-sw" style="background:{c}"></i>{esc(LAYER_NAMES[k])}</span>'
        for k, c in LAYER_COLOURS.items()
    )
    cache = "".join(
        f'<span><i class="cai-chip cai-{k}">{CACHE_ICONS[k]} {v}</i></span>'
        for k, v in CACHE_LABELS.items()
    )
    changes = "".join(
        f'<span><i class="cai-chip cai-{k}">{k}</i></span>'
        for k in ("new", "changed", "released", "unchanged")
    )
    return (
        f'<div class="cai-legend">{layers}</div>'
        f'<div class="cai-legend"><span style="color:#888">cache:</span>{cache}'
        f'<span style="color:#888;margin-left:.8rem">change:</span>{changes}'
        f'<span style="color:#888;margin-left:.8rem">①–④ breakpoints</span></div>'
    )


def _field(block: Any, name: str, default: Any = None) -> Any:
    return getattr(block, name, default)


def block_stack(blocks: Sequence[Any], cached_prefix_tokens: int, approximate: bool) -> str:
    """The context as a stack of blocks in wire order, with the cached-prefix line and ①–④."""
    biggest = max((b.tokens for b in blocks), default=1) or 1
    # The prefix line goes after the last block of the leading run the cache read.
    prefix_after = -1
    for i, b in enumerate(blocks):
        if b.cache != "read":
            break
        prefix_after = i
    approx = " ≈" if approximate else ""
    note = (
        "everything above it was read from the provider's cache"
        if prefix_after >= 0
        else "nothing was read from the cache at this step"
    )
    prefix_line = (
        f'<div class="cai-prefix" data-testid="cached-prefix">cached prefix: '
        f"{cached_prefix_tokens:,} tokens<small>{note}</small></div>"
    )
    rows = [
        '<div class="cai-row cai-head"><span></span><span>component</span><span>layer</span>'
        f'<span>tokens{approx}</span><span>cache</span><span>change</span><span title="breakpoint">bp</span></div>'
    ]
    if prefix_after < 0:
        rows.append(prefix_line)
    last_section = ""
    for i, b in enumerate(blocks):
        colour = LAYER_COLOURS.get(b.layer, "#888")
        width = max(1.0, 100.0 * b.tokens / biggest)
        cache_cls = b.cache if b.cache in CACHE_LABELS else "uncached"
        bp = b.breakpoint
        own = f", its own lifetime {esc(b.marker_ttl)}" if b.marker_ttl else ""
        bp_html = (
            f'<span class="cai-bp" title="breakpoint {bp}{own}: a cache entry ends after this block">'
            f"{CIRCLED[bp - 1] if 0 < bp <= len(CIRCLED) else esc(bp)}"
            f"{f'<small> {esc(b.marker_ttl)}</small>' if b.marker_ttl else ''}</span>"
            if bp
            else "<span></span>"
        )
        if b.section != last_section:
            last_section = b.section
            rows.append(f'<div class="cai-section">{esc(b.section)}</div>')
        change_title = (
            "the call tree released the io of a finished subtree"
            if b.change == "released"
            else f"{b.change} since the previous step"
        )
        rows.append(
            f'<div class="cai-row" data-block="{esc(b.name)}">'
            f'<span class="cai-bar" style="background:{colour}"></span>'
            f'<span class="cai-name" title="{esc((b.text or "")[:400])}">{esc(b.name)}</span>'
            f'<span class="cai-layer" style="color:{colour}">{esc(b.layer)}</span>'
            f'<span class="cai-tok"><span class="cai-tokbar" style="width:{width:.1f}%;background:{colour}"></span>'
            f'<span class="cai-num">{b.tokens:,}</span></span>'
            f'<span class="cai-chip cai-{cache_cls}">{CACHE_ICONS[cache_cls]} {CACHE_LABELS[cache_cls]}</span>'
            f'<span class="cai-chip cai-{esc(b.change)}" title="{esc(change_title)}">{esc(b.change)}</span>'
            f"{bp_html}</div>"
        )
        if i == prefix_after:
            rows.append(prefix_line)
    return f'<div class="cai-stack">{"".join(rows)}</div>'


_FLOW_DONE = re.compile(r"^\s*-?\s*\{.*status:\s*done.*\}\s*$")


#: Runs of released lines longer than this are folded in the view (the block text keeps them).
FOLD_RUN = 40
FOLD_KEEP = 4
#: Above this many lines, the middle of the tree (finished work) is folded too.
MAX_TREE_LINES = 600
TREE_HEAD = 120
TREE_TAIL = 380


def _visible(lines: list[str], released: list[bool], running: set[int]) -> list[bool]:
    """Which lines the view shows: long released runs and an over-long middle are folded."""
    visible = [True] * len(lines)
    i = 0
    while i < len(lines):
        if not released[i]:
            i += 1
            continue
        j = i
        while j < len(lines) and released[j]:
            j += 1
        if j - i > FOLD_RUN:
            for k in range(i + FOLD_KEEP, j - FOLD_KEEP):
                visible[k] = False
        i = j
    shown = [i for i, v in enumerate(visible) if v]
    if len(shown) > MAX_TREE_LINES:
        for k in shown[TREE_HEAD:-TREE_TAIL]:
            if k not in running:
                visible[k] = False
    return visible


def call_tree(text: str) -> str:
    """The call-tree YAML with the running node marked and released nodes struck through.

    Long runs of released one-line nodes, and the middle of a very long tree,
    are folded with a note saying how many lines, so a 5,000-step session's
    tree stays quick to draw; the block text keeps every line.
    """
    lines = text.splitlines()
    running_list = [i for i, line in enumerate(lines) if line.strip() == "status: running"]
    running = set(running_list)
    current = running_list[-1] if running_list else -1
    released = [bool(_FLOW_DONE.match(line)) for line in lines]
    visible = _visible(lines, released, running)
    out: list[str] = []
    folded = 0
    for i, line in enumerate(lines):
        if not visible[i]:
            folded += 1
            continue
        if folded:
            out.append(
                f'<span class="t-rnote">      … {folded:,} lines of finished work folded here '
                "(the block text has them all) …</span>"
            )
            folded = 0
        safe = esc(line)
        stripped = line.strip()
        if stripped in ("<call_tree>", "</call_tree>"):
            out.append(f'<span class="t-tag">{safe}</span>')
        elif i == current:
            out.append(
                f'<span class="t-current">{safe}</span>  <span class="t-note">◀ running now</span>'
            )
        elif i in running:
            out.append(f'<span class="t-running">{safe}</span>')
        elif released[i]:
            pad = len(line) - len(line.lstrip(" "))
            out.append(
                f'{" " * pad}<span class="t-released">{esc(line[pad:])}</span>'
                '  <span class="t-rnote">released</span>'
            )
        elif stripped.startswith("output:"):
            out.append(f'<span class="t-output">{safe}</span>')
        else:
            out.append(safe)
    if folded:
        out.append(f'<span class="t-rnote">      … {folded:,} lines folded …</span>')
    return f'<pre class="cai-tree" data-testid="call-tree">{chr(10).join(out)}</pre>'
