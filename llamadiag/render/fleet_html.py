"""The fleet report as one self-contained HTML page (`llamadiag fleet --html FILE`).

The pictures are matplotlib figures inlined as SVG (no script, no external resource, glyphs
drawn as paths so log-derived names cannot inject markup): instances by known failures as a
heatmap, and the findings over time (by when each instance's log was last written). The tables
below say the same in words. Every string from a log is escaped.
"""

from __future__ import annotations

import io
from collections import Counter
from datetime import datetime
from html import escape
from typing import Any

from llamadiag.features.fleet.report import FleetReport
from llamadiag.render.fleet import builds_text, headline, names

MAX_ROWS = 40  # instances in the heatmap (those with most failures first)
MAX_COLS = 25  # failures in the heatmap (on most instances first)

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f3f3f3}code{background:#f6f6f6;padding:0 3px}
.figure svg{max-width:100%;height:auto}.E{color:#b00}.W{color:#a60}
"""


def _svg(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and doctype: the SVG sits inside HTML


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "llamadiag"  # the same ids on every run: the page is reproducible
    matplotlib.rcParams["svg.fonttype"] = "path"
    import matplotlib.pyplot as plt

    return plt


def heatmap_svg(r: FleetReport) -> str | None:
    """Instances (rows) by known failures (columns), each cell the failure's count on it."""
    if not r.failures:
        return None
    cols = [f.rule_id for f in r.failures[:MAX_COLS]]
    counts = {(h.instance, f.rule_id): h.count for f in r.failures for h in f.hits}
    per = Counter(inst for inst, rule in counts if rule in cols)
    rows = sorted(per, key=lambda n: (-per[n], n))[:MAX_ROWS]
    plt = _pyplot()
    import numpy as np

    grid = np.array([[counts.get((row, col), 0) for col in cols] for row in rows], dtype=float)
    fig, ax = plt.subplots(figsize=(2.5 + 0.3 * len(cols), 1.2 + 0.22 * len(rows)))
    # pcolormesh draws each cell as a vector path: no embedded raster, which the page's
    # Content-Security-Policy (no data: images) would block
    ax.pcolormesh(
        np.ma.masked_equal(np.log2(grid + 1), 0), cmap="OrRd", vmin=0, edgecolors="#eeeeee", linewidth=0.5
    )
    ax.set_xlim(0, len(cols))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([x + 0.5 for x in range(len(cols))], cols, rotation=60, ha="right", fontsize=7)
    ax.set_yticks([y + 0.5 for y in range(len(rows))], [n[-40:] for n in rows], fontsize=7)
    ax.set_facecolor("#fafafa")
    for (y, x), count in np.ndenumerate(grid):  # the count in its cell: a colour bar would be a raster
        if count:
            ax.text(x + 0.5, y + 0.5, str(int(count)), ha="center", va="center", fontsize=6)
    ax.set_title("Instances × known failures", fontsize=9)
    return _svg(fig)


def timeline_svg(r: FleetReport) -> str | None:
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
    plt = _pyplot()
    xs = sorted(days)
    dates = [datetime.fromisoformat(d) for d in xs]
    fig, ax = plt.subplots(figsize=(7, 2.6))
    ax.bar(dates, [days[d] for d in xs], width=0.8, color="#cfd8e3", label="instances (log last written)")
    ax.bar(dates, [failing[d] for d in xs], width=0.5, color="#d9534f", label="with a known failure")
    ax.set_ylabel("instances", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title("Findings over time", fontsize=9)
    fig.autofmt_xdate()
    return _svg(fig)


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
    for title, svg in (("heatmap", heatmap_svg(r)), ("timeline", timeline_svg(r))):
        if svg:
            parts.append(f'<div class="figure" id="{title}">{svg}</div>')
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
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>llamadiag fleet report</title><style>{_STYLE}</style></head><body>"
        + "\n".join(parts)
        + "</body></html>\n"
    )
