"""Plotly figures over the per-step table. Each point carries its step number."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from assembler.analysis.app import MAX_POINTS, extreme_indices
from ui.html import LAYER_COLOURS
from ui.views.chart_marker import Mark

CACHE_COLOURS = {"read": "#40c057", "write": "#fab005", "uncached": "#adb5bd"}
BIG = 1000  # above this many steps, WebGL traces
#: Thinned series (a few hundred points) are drawn as SVG: measured in headless chromium on
#: this machine, a timeline click at 5,000 steps painted in ~0.9 s with SVG against ~1.5 s
#: with WebGL traces (software WebGL, no GPU); unthinned point clouds stay WebGL above BIG.
THINNED_TRACE = go.Scatter


def label(text: str) -> str:
    """User text for a plotly label, legend or hover: plotly renders a subset of HTML
    there (links among it), so every tag character is escaped; ``%{`` starts a template."""
    return html.escape(text, quote=False).replace("%{", "%&#123;")


def _layout(
    fig: go.Figure, title: str, y: str, x: str = "step", note: str | None = None
) -> go.Figure:
    # Plotly does not wrap titles: a short title and a smaller second line stay whole in a
    # half-width column at 1,000 px; the legend sits below the axis title, not on it.
    text = title if note is None else f"{title}<br><sup>{note}</sup>"
    fig.update_layout(
        title={"text": text, "font": {"size": 14}},
        margin={"l": 10, "r": 10, "t": 40 if note is None else 58, "b": 10},
        height=300 if note is None else 318,
        legend={"orientation": "h", "yanchor": "top", "y": -0.5},
        xaxis_title=x,
        yaxis_title=y,
        bargap=0.05,
    )
    return fig


def thin(frame: Any, columns: Sequence[str]) -> Any:
    """The rows to draw of a long frame: per bin its first step and each column's extremes."""
    if len(frame) <= MAX_POINTS:
        return frame
    keep = extreme_indices([frame[c].tolist() for c in columns])
    return frame.iloc[keep]


def _stacked(fig: go.Figure, frame: Any, layers: Sequence[tuple[str, str, str]], unit: str) -> None:
    """Stacked areas of a thinned frame (cumulative sums, each filled to the trace below)."""
    level = None
    for column, name, colour in layers:
        level = frame[column] if level is None else level + frame[column]
        fig.add_trace(
            THINNED_TRACE(
                x=frame["step"],
                y=level,
                name=name,
                mode="lines+markers",
                line={"color": colour, "width": 1, "shape": "hv"},
                marker={"size": 3, "color": colour},
                fill="tozeroy" if column == layers[0][0] else "tonexty",
                fillcolor=colour,
                customdata=frame["step"],
                text=frame[column],
                hovertemplate="step %{x}: %{text:,} " + unit + "<extra>" + name + "</extra>",
            )
        )


def tokens_by_layer(frame: Any) -> go.Figure:
    fig = go.Figure()
    if len(frame) > MAX_POINTS:
        shown = thin(frame, ["total"])
        _stacked(
            fig,
            shown,
            [
                ("tools", "tools (L0)", LAYER_COLOURS["L0"]),
                ("L0", "L0 system", LAYER_COLOURS["L0"]),
                ("L1", "L1", LAYER_COLOURS["L1"]),
                ("L2", "L2", LAYER_COLOURS["L2"]),
            ],
            "tokens",
        )
        kept = f"{len(shown):,} of {len(frame):,} steps: extremes kept"
        return _layout(fig, "Tokens per step, by layer", "tokens", note=kept)
    for layer, name in (("tools", "tools (L0)"), ("L0", "L0 system"), ("L1", "L1"), ("L2", "L2")):
        colour = LAYER_COLOURS["L0"] if layer == "tools" else LAYER_COLOURS[layer]
        fig.add_bar(
            x=frame["step"],
            y=frame[layer],
            name=name,
            marker={"color": colour, "opacity": 0.55 if layer == "tools" else 0.9},
            customdata=frame["step"],
            hovertemplate="step %{x}: %{y:,} tokens<extra>" + name + "</extra>",
        )
    fig.update_layout(barmode="stack")
    return _layout(fig, "Tokens per step, by layer", "tokens")


MEASURED_LEVELS = (
    ("read", "measured read", "read"),
    ("write", "measured read + written", "written"),
    ("uncached", "measured total", "uncached"),
)


def measured_overlay(fig: go.Figure, analysis: Any) -> bool:
    """Overlay the provider's measured usage on the stacked cache bars.

    One dashed line with markers per level of the stack (read, read + written,
    read + written + uncached), so a measured point sits where the simulated
    segment ends when they agree; steps without measured usage are gaps. Steps
    where simulated and measured classes disagree get a red ring. Returns
    whether anything was drawn (no step carries measured usage: nothing).
    """
    from assembler.analysis.bill import compare_measured

    steps = list(getattr(analysis, "steps", ()))
    if not any(s.measured is not None for s in steps):
        return False
    scatter = go.Scattergl if len(steps) > BIG else go.Scatter
    xs = [s.step for s in steps]
    level = [0] * len(steps)
    for column, name, verb in MEASURED_LEVELS:
        values: list[int | None] = []
        ys: list[int | None] = []
        for i, s in enumerate(steps):
            u = s.measured
            if u is None:
                values.append(None)
                ys.append(None)
                continue
            v = {"read": u.cache_read, "write": u.cache_write, "uncached": u.input}[column]
            level[i] += v
            values.append(v)
            ys.append(level[i])
        fig.add_trace(
            scatter(
                x=xs,
                y=ys,
                name=name,
                mode="lines+markers",
                connectgaps=False,
                line={"color": CACHE_COLOURS[column], "dash": "dash", "width": 2},
                marker={
                    "symbol": "diamond",
                    "size": 8,
                    "color": CACHE_COLOURS[column],
                    "line": {"width": 1, "color": "#1f2430"},
                },
                customdata=[[x, v] for x, v in zip(xs, values, strict=True)],
                hovertemplate="step %{x}: %{customdata[1]:,} measured "
                + verb
                + "<extra>measured</extra>",
            )
        )
    off = [c for c in compare_measured(analysis) if not c.agree]
    if off:
        totals = {c.step: c.measured.total for c in off}
        fig.add_trace(
            go.Scatter(
                x=[c.step for c in off],
                y=[totals[c.step] for c in off],
                name="simulated ≠ measured",
                mode="markers",
                marker={
                    "symbol": "circle-open",
                    "size": 16,
                    "color": "#f03e3e",
                    "line": {"width": 2},
                },
                customdata=[[c.step, c.sentence] for c in off],
                hovertemplate="%{customdata[1]}<extra></extra>",
            )
        )
    return True


def cache_per_step(frame: Any, analysis: Any | None = None) -> go.Figure:
    """Stacked read / written / uncached bars; with ``analysis``, measured usage on top."""
    fig = go.Figure()
    if len(frame) > MAX_POINTS:
        shown = thin(frame, ["total", "read"])
        _stacked(
            fig,
            shown,
            [
                (c, n, CACHE_COLOURS[c])
                for c, n in (("read", "read"), ("write", "written"), ("uncached", "uncached"))
            ],
            "tokens",
        )
        note = f"read / written / uncached · {len(shown):,} of {len(frame):,} steps: extremes kept"
        if analysis is not None and measured_overlay(fig, analysis):
            note += " (dashed: measured)"
        return _layout(fig, "Cache per step", "tokens", note=note)
    for column, name in (("read", "read"), ("write", "written"), ("uncached", "uncached")):
        fig.add_bar(
            x=frame["step"],
            y=frame[column],
            name=name,
            marker={"color": CACHE_COLOURS[column]},
            customdata=frame["step"],
            hovertemplate="step %{x}: %{y:,}<extra>" + name + "</extra>",
        )
    fig.update_layout(barmode="stack")
    note = "read / written / uncached tokens"
    if analysis is not None and measured_overlay(fig, analysis):
        note += " (dashed: measured)"
    return _layout(fig, "Cache per step", "tokens", note=note)


def cumulative_cost(frame: Any) -> go.Figure:
    trace = go.Scattergl if len(frame) > BIG else go.Scatter
    frame = thin(frame, ["usd"])  # cumulative: monotone, each bin's costliest step kept
    fig = go.Figure()
    for column, name, colour in (
        ("cum_usd", "with caching", "#3b5bdb"),
        ("cum_usd_without_cache", "without caching", "#e8590c"),
    ):
        fig.add_trace(
            trace(
                x=frame["step"],
                y=frame[column],
                name=name,
                mode="lines+markers" if len(frame) <= 200 else "lines",
                line={"color": colour},
                customdata=frame["step"],
                hovertemplate="step %{x}: $%{y:.4f}<extra>" + name + "</extra>",
            )
        )
    return _layout(fig, "Cumulative cost", "USD", note="with and without caching")


def size_vs_depth(frame: Any) -> go.Figure:
    trace = go.Scattergl if len(frame) > BIG else go.Scatter
    frame = thin(frame, ["total", "hit_ratio"])
    fig = go.Figure()
    fig.add_trace(
        trace(
            x=frame["depth"],
            y=frame["total"],
            mode="markers",
            name="steps",
            marker={
                "color": frame["hit_ratio"],
                "colorscale": [[0, "#f03e3e"], [0.5, "#fab005"], [1, "#2f9e44"]],
                "cmin": 0,
                "cmax": 1,
                "size": 8 if len(frame) <= 200 else 4,
                "showscale": True,
                "colorbar": {"title": "hit ratio", "thickness": 10},
            },
            customdata=frame["step"],
            hovertemplate="step %{customdata}: depth %{x}, %{y:,} tokens<extra></extra>",
        )
    )
    fig.update_xaxes(dtick=1)
    return _layout(fig, "Context size against call depth", "tokens", x="call depth")


def step_mark(frame: Any, step: int, key: str, at_point: bool = False) -> Mark | None:
    """Where ``step`` is on the chart keyed ``key``: a line at the step, or (``at_point``,
    the size-against-depth chart) a star on its point; None when the step is not charted."""
    if not at_point:
        return Mark(key, step, f"step {step}")
    row = frame[frame["step"] == step]
    if not len(row):
        return None
    return Mark(key, int(row["depth"].iloc[0]), f"step {step}", int(row["total"].iloc[0]))


def selected_step(state: Any, steps: Sequence[int]) -> int | None:
    """The step of the first selected point in a plotly selection state, if any.

    Each trace carries its step numbers as ``customdata``; without it, the
    point's index into ``steps`` (every trace here is in step order).
    """
    try:
        points = state["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for point in points or []:
        custom = point.get("customdata")
        if isinstance(custom, list | tuple) and custom:
            custom = custom[0]
        if isinstance(custom, int | float):
            return int(custom)
        index = point.get("point_index", point.get("point_number"))
        if isinstance(index, int) and 0 <= index < len(steps):
            return int(steps[index])
    return None


def chart(
    fig: go.Figure,
    key: str,
    steps: Sequence[int],
    on_pick: Callable[[int], None],
) -> None:
    """Draw a figure; selecting a point calls ``on_pick(step)``."""

    def picked() -> None:
        chosen = selected_step(st.session_state.get(key), steps)
        if chosen is not None:
            on_pick(chosen)

    st.plotly_chart(
        fig,
        key=key,
        on_select=picked,
        selection_mode=("points",),
        config={"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d"]},
    )
