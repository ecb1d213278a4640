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


#: The room, in pixels, that plotly's own parts take around a chart's plot area at the
#: app's fonts, measured in Chromium (the margins plotly grew them to): tick labels of up
#: to five characters and the axis title on the left; tick labels and the title under the
#: x axis; the horizontal legend, its top under the x axis title, its padding and rows;
#: a colour bar's labels on the right.
LEFT_ROOM = 80
AXIS_ROOM = 68
LEGEND_TOP = 48
LEGEND_PAD = 20
LEGEND_ROW = 20
COLORBAR_ROOM = 85
#: The legend's text per row at half the page's width (a chart in one of two columns).
LEGEND_ROW_CHARS = 48


def _legend_rows(fig: go.Figure) -> int:
    """Rows of the horizontal legend: none for a single trace (plotly shows no legend)."""
    names = [str(t.name or "") for t in fig.data if t.showlegend is not False]
    if len(names) < 2:
        return 0
    # each entry: its symbol and gaps (about six characters' room) and its text
    return -(-sum(len(n) + 6 for n in names) // LEGEND_ROW_CHARS)


def layout(
    fig: go.Figure, title: str, y: str, x: str = "step", note: str | None = None
) -> go.Figure:
    """A chart's title, axis titles, size, legend and margins, the same on every page."""
    # Plotly does not wrap titles: a short title and a smaller second line stay whole in a
    # half-width column at 1,000 px.
    text = title if note is None else f"{title}<br><sup>{note}</sup>"
    top = 40 if note is None else 58
    height = 300 if note is None else 318
    # Plotly draws a chart, measures what its tick labels, legend and colour bar push
    # into the margins, and, when the margins must grow, draws the whole chart again:
    # every Timeline chart was drawn twice (counted in Chromium), a third of the page's
    # time to paint. Margins that already hold those parts are drawn once; a part
    # larger than this room still grows them, as before.
    rows = _legend_rows(fig)
    bottom = LEGEND_TOP + LEGEND_PAD + rows * LEGEND_ROW if rows else AXIS_ROOM
    scale = any(getattr(getattr(t, "marker", None), "showscale", False) for t in fig.data)
    fig.update_layout(
        title={"text": text, "font": {"size": 14}},
        margin={
            "l": LEFT_ROOM,
            "r": COLORBAR_ROOM if scale else 10,
            "t": top,
            "b": bottom,
        },
        height=height,
        # the legend right under the x axis title, whatever the plot's height
        legend={
            "orientation": "h",
            "yanchor": "top",
            "y": -LEGEND_TOP / (height - top - bottom),
            "x": 0,
        },
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
        return layout(fig, "Tokens per step, by layer", "tokens", note=kept)
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
    return layout(fig, "Tokens per step, by layer", "tokens")


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
        return layout(fig, "Cache per step", "tokens", note=note)
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
    return layout(fig, "Cache per step", "tokens", note=note)


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
    return layout(fig, "Cumulative cost", "USD", note="with and without caching")


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
    return layout(fig, "Context size against call depth", "tokens", x="call depth")


#: The step table's columns the charts read, for :func:`warm`.
_WARM_COLUMNS = (
    "step", "depth", "total", "tools", "L0", "L1", "L2", "read", "write", "uncached",
    "hit_ratio", "usd", "usd_without_cache", "cum_usd", "cum_usd_without_cache",
)  # fmt: skip


def warm() -> None:
    """Build each chart once, on three made-up steps, and throw them away.

    The first figure a process builds pays for the modules plotly and narwhals import on
    first use (a trace type's classes, the pandas adapter): on a 156-step session the
    Timeline's four figures took 210 ms the first time and 65 ms after, measured on this
    machine. Called by the warm-up thread, before a user's first chart.
    """
    import pandas as pd

    frame = pd.DataFrame({c: [1, 2, 3] for c in _WARM_COLUMNS})
    for build in (cache_per_step, tokens_by_layer, cumulative_cost, size_vs_depth):
        build(frame).to_dict()


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
