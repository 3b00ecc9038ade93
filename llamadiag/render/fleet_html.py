"""The fleet report as one self-contained HTML page (`llamadiag fleet --html FILE`).

The pictures are plotly figures (plotly needs no numpy, so `[fleet]` keeps numpy, and with it
+14 MiB, out of every Dask worker: docs/fleet.md), drawn in the browser by the plotly.js bundled
in the page: nothing is loaded from anywhere. The Content-Security-Policy lets run only the two
scripts written here (by their SHA-256) and images only from data: URLs (plotly draws a heatmap
as one). Instances by known failures as a heatmap, and the findings over time (by when each
instance's log was last written); the tables below say the same in words.

Every string from a log is escaped: in the tables as HTML; in a figure, HTML-escaped too (plotly
reads a small HTML subset in labels: escaped, a name is shown as text and never read as a tag),
and the figure's JSON has `<`, `>` and `&` as \\u escapes so nothing in it can end its script.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections import Counter
from html import escape
from typing import Any

from llamadiag.features.fleet.report import FleetReport
from llamadiag.render.fleet import builds_text, headline, names

MAX_ROWS = 40  # instances in the heatmap (those with most failures first)
MAX_COLS = 25  # failures in the heatmap (on most instances first)
DAY_MS = 86_400_000  # a date axis counts in milliseconds

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f3f3f3}code{background:#f6f6f6;padding:0 3px}
.figure{width:100%}.E{color:#b00}.W{color:#a60}
"""
# what a figure's JSON may not hold literally inside <script> (its end tag, a comment opener, an
# entity), nor JavaScript inside a string (the two line separators)
_JS_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})
_CONFIG = {"displaylogo": False, "responsive": True}
_FONT = {"family": "system-ui, sans-serif", "size": 11}


def _label(text: str) -> str:
    """A log-derived string as plotly shows it: HTML-escaped, so plotly's tag subset (links,
    spans with styles) cannot be reached from a log; plotly shows the entities as the characters."""
    return escape(text, quote=True)


def heatmap(r: FleetReport) -> dict[str, Any] | None:
    """Instances (rows) by known failures (columns), each cell the failure's count on it; the
    colour is log2(count + 1), an empty cell a gap. Plain lists: no numpy."""
    if not r.failures:
        return None
    cols = [f.rule_id for f in r.failures[:MAX_COLS]]
    counts = {(h.instance, f.rule_id): h.count for f in r.failures for h in f.hits}
    per = Counter(inst for inst, rule in counts if rule in cols)
    rows = sorted(per, key=lambda n: (-per[n], n))[:MAX_ROWS]
    grid = [[counts.get((row, col), 0) for col in cols] for row in rows]
    # positions on both axes, the names as tick text: a name that looks like a number or a date
    # stays a name, and two names cut to the same 40 characters stay two rows
    trace = {
        "type": "heatmap",
        "x": list(range(len(cols))),
        "y": list(range(len(rows))),
        "z": [[math.log2(c + 1) if c else None for c in line] for line in grid],
        "text": [[str(c) if c else "" for c in line] for line in grid],
        "customdata": [
            [f"{_label(row)}<br>{_label(col)}: {c}" for col, c in zip(cols, line, strict=True)]
            for row, line in zip(rows, grid, strict=True)
        ],
        "texttemplate": "%{text}",
        "hovertemplate": "%{customdata}<extra></extra>",
        "colorscale": "OrRd",
        "zmin": 0,
        "showscale": False,
        "xgap": 1,
        "ygap": 1,
    }
    layout = {
        "title": {"text": "Instances × known failures", "font": {"size": 13}},
        "font": _FONT,
        "height": 160 + 22 * len(rows),
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "xaxis": {
            "tickvals": trace["x"],
            "ticktext": [_label(c) for c in cols],
            "tickangle": -60,
            "side": "bottom",
            "automargin": True,
            "showgrid": False,
            "zeroline": False,
        },
        "yaxis": {
            "tickvals": trace["y"],
            "ticktext": [_label(n[-40:]) for n in rows],
            "autorange": "reversed",
            "automargin": True,
            "showgrid": False,
            "zeroline": False,
        },
        "plot_bgcolor": "#fafafa",
    }
    return {"data": [trace], "layout": layout}


def timeline(r: FleetReport) -> dict[str, Any] | None:
    """Per day: instances whose log was written then, and how many of them hit a known failure."""
    days: Counter[str] = Counter()
    failing: Counter[str] = Counter()
    for i in r.instance_list:
        if i.seen is None:
            continue
        day = i.seen[:10]
        days[day] += 1
        failing[day] += bool(i.failures)
    if not days:
        return None
    xs = sorted(days)
    bars = [
        ("instances (log last written)", [days[d] for d in xs], 0.8, "#cfd8e3"),
        ("with a known failure", [failing[d] for d in xs], 0.5, "#d9534f"),
    ]
    data = [
        {
            "type": "bar",
            "name": name,
            "x": xs,
            "y": ys,
            "width": [width * DAY_MS] * len(xs),
            "marker": {"color": colour},
            "hovertemplate": "%{x|%Y-%m-%d}: %{y}<extra>" + name + "</extra>",
        }
        for name, ys, width, colour in bars
    ]
    layout = {
        "title": {"text": "Findings over time", "font": {"size": 13}},
        "font": _FONT,
        "height": 300,
        "barmode": "overlay",
        "margin": {"l": 10, "r": 10, "t": 70, "b": 10},
        "xaxis": {"type": "date", "automargin": True},
        "yaxis": {"title": {"text": "instances"}, "rangemode": "tozero", "automargin": True},
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},  # above the bars, not on them
        "plot_bgcolor": "#fafafa",
    }
    return {"data": data, "layout": layout}


def _draw_script(figures: dict[str, dict[str, Any]]) -> str:
    """The script that draws each figure into its div (figures: div id -> plotly's data and
    layout), then marks the body `data-drawn` (what a screenshot waits for)."""
    calls = ",".join(
        f"Plotly.newPlot({json.dumps(div)},{json.dumps(fig['data'])},{json.dumps(fig['layout'])},{json.dumps(_CONFIG)})"
        for div, fig in figures.items()
    )
    script = f'Promise.all([{calls}]).then(function(){{document.body.setAttribute("data-drawn","")}});'
    return script.translate(_JS_SAFE)


def _plotly_js() -> str:
    """plotly.js as the installed plotly ships it (imported here only: the rest of the fleet
    command, and its workers, never load plotly)."""
    from plotly.offline import get_plotlyjs

    js: str = get_plotlyjs()
    if "</script" in js.lower():  # cannot happen with plotly's own bundle; it would end the element early
        raise ValueError("plotly.js holds '</script': it cannot be inlined")
    return js


def _sha256(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii") + "'"


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _table(head: list[str], rows: list[list[str]]) -> str:
    """Cells are already escaped HTML."""
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def fleet_html(r: FleetReport) -> str:
    """The page: headline, pictures, then the tables (failures, upgrade plan, builds, unexplained lines)."""
    parts = [f"<h1>Fleet report</h1><p>{_e(headline(r))}</p>"]
    drawn = {div: fig for div, fig in (("heatmap", heatmap(r)), ("timeline", timeline(r))) if fig}
    parts.extend(f'<div class="figure" id="{div}"></div>' for div in drawn)
    scripts = [_plotly_js(), _draw_script(drawn)] if drawn else []
    if r.failures:
        rows = [
            [
                f"<code>{_e(f.rule_id)}</code><br>{_e(f.title)}",
                str(f.instances),
                str(f.count),
                _e(f.confidence),
                _e(builds_text(f.builds)),
                " ".join(f'<a href="{_e(x.url)}">{_e(x.label)}</a>' for x in f.references[:3]),
                _e(names(h.instance for h in f.hits)),
            ]
            for f in r.failures
        ]
        parts.append("<h2>Known failures</h2>")
        parts.append(_table(["failure", "instances", "count", "confidence", "builds", "references", "on"], rows))
    if r.upgrade.steps:
        parts.append("<h2>Upgrade plan</h2>")
        if r.upgrade.text:
            parts.append(f"<p><b>{_e(r.upgrade.text)}</b></p>")
        items = "".join(
            f"<li><code>{_e(s.rule_id)}</code>: {_e(s.text)} {_e(names(s.instances))}</li>" for s in r.upgrade.steps
        )
        parts.append(f"<ul>{items}</ul>")
    build_rows = [
        [
            _e(f"b{b.build}" if b.build is not None else "unknown"),
            _e(f"{len(b.instances)}: {names(b.instances, 4)}"),
            str(len(b.known_issues)),
            _e(", ".join(i.rule_id for i in b.known_issues if i.seen) or "-"),
        ]
        for b in r.builds
    ]
    parts.append("<h2>Builds</h2>")
    parts.append(_table(["build", "instances", "known failures in its window", "seen here"], build_rows))
    if r.unmatched:
        rows = [
            [str(u.instances), str(u.count), f'<span class="{_e(u.level)}">{_e(u.level)}</span>', _e(u.template)]
            for u in r.unmatched[:50]
        ]
        parts.append("<h2>Errors no rule explains (the next rules to write)</h2>")
        parts.append(_table(["instances", "count", "level", "template"], rows))
    if r.errors:
        parts.append("<h2>Logs not read</h2><ul>")
        parts.extend(f"<li>{_e(e.log)}: {_e(e.error)}</li>" for e in r.errors)
        parts.append("</ul>")
    # only these scripts run (plotly.js, then the drawing), styles inline (plotly adds its own),
    # images only as data: URLs (the heatmap's cells); nothing is fetched
    policy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    if scripts:
        policy += "; script-src " + " ".join(_sha256(js) for js in scripts)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f"<title>llamadiag fleet report</title><style>{_STYLE}</style></head><body>"
        + "\n".join(parts)
        + "".join(f"<script>{js}</script>" for js in scripts)
        + "</body></html>\n"
    )
