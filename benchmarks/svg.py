"""Hand-written log-log charts in SVG for the benchmarks (no plotting library needed).

A chart is a list of SVG elements drawn in a ``width`` x ``height`` box; :func:`document` wraps
one chart, or several side by side, into a standalone ``<svg>``.

>>> import xml.etree.ElementTree as ET
>>> panel = loglog([Line([(10, 1.0), (1000, 30.0)], "#333333", label="a")], title="t", x_label="n")
>>> ET.fromstring(document([panel], width=640, height=400)).tag
'{http://www.w3.org/2000/svg}svg'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

#: Distinct colours, dark first, for contenders in a fixed order.
PALETTE = ("#333333", "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")


@dataclass(frozen=True)
class Line:
    """One series: its points (x, y), colour, dash pattern ('' solid) and legend text ('' none)."""

    points: Sequence[tuple[float, float]]
    colour: str
    dash: str = ""
    label: str = ""


@dataclass(frozen=True)
class Mark:
    """A point where a series stopped (a peer gave up): a cross and a few words beside it."""

    x: float
    y: float
    colour: str
    text: str
    dy: float = 0.0  # the words' offset down, in pixels (for marks that fall on one spot)


def count_label(x: float) -> str:
    """A power of ten as people write counts.

    >>> count_label(100), count_label(10_000), count_label(1e6)
    ('100', '10k', '1M')
    """
    n = round(x)
    return f"{n // 10**6}M" if n >= 10**6 else f"{n // 1000}k" if n >= 1000 else str(n)


def _positive(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    return [(x, y) for x, y in points if x > 0 and y > 0 and math.isfinite(x) and math.isfinite(y)]


def loglog(
    lines: Sequence[Line],
    *,
    title: str,
    x_label: str,
    y_unit: str = "ms",
    marks: Sequence[Mark] = (),
    width: int = 640,
    height: int = 400,
    margins: tuple[int, int, int, int] = (70, 170, 30, 50),
    x_format: Callable[[float], str] = count_label,
) -> list[str]:
    """The elements of one log-log chart: grid at powers of ten, lines with their points, a legend
    on the right (one entry per labelled line), crosses for ``marks``. Points that are not
    positive and finite are left out (a log axis has no place for them)."""
    w, h, (left, right, top, bottom) = width, height, margins
    shown = [Line(_positive(line.points), line.colour, line.dash, line.label) for line in lines]
    xs = [x for line in shown for x, _ in line.points] + [m.x for m in marks]
    ys = [y for line in shown for _, y in line.points] + [m.y for m in marks]
    xs, ys = xs or [1.0, 10.0], ys or [1.0, 10.0]
    x0, y0 = math.floor(math.log10(min(xs))), math.floor(math.log10(min(ys)))
    x1, y1 = max(math.ceil(math.log10(max(xs))), x0 + 1), max(math.ceil(math.log10(max(ys))), y0 + 1)

    def px(x: float) -> float:
        return left + (math.log10(x) - x0) / (x1 - x0) * (w - left - right)

    def py(y: float) -> float:
        return h - bottom - (math.log10(y) - y0) / (y1 - y0) * (h - top - bottom)

    out = []
    for e in range(x0, x1 + 1):
        out.append(f'<line x1="{px(10**e):.1f}" y1="{top}" x2="{px(10**e):.1f}" y2="{h - bottom}" stroke="#ddd"/>'
                   f'<text x="{px(10**e):.1f}" y="{h - bottom + 18}" text-anchor="middle">{x_format(10**e)}</text>')
    for e in range(y0, y1 + 1):
        out.append(f'<line x1="{left}" y1="{py(10.0**e):.1f}" x2="{w - right}" y2="{py(10.0**e):.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 6}" y="{py(10.0**e) + 4:.1f}" text-anchor="end">{10.0**e:g} {y_unit}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">{escape(x_label)}</text>'
               f'<text x="{left}" y="{top - 12}">{escape(title)}</text>')
    legend = iter(range(top + 20, 10**6, 22))
    for line in shown:
        if line.points:
            dash = f' stroke-dasharray="{line.dash}"' if line.dash else ""
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line.points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{line.colour}" stroke-width="2"{dash}/>')
            out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{line.colour}"/>' for x, y in line.points]
        if line.label:
            ly = next(legend)
            dash = f' stroke-dasharray="{line.dash}"' if line.dash else ""
            out.append(f'<line x1="{w - right + 15}" y1="{ly}" x2="{w - right + 40}" y2="{ly}" '
                       f'stroke="{line.colour}" stroke-width="2"{dash}/>'
                       f'<text x="{w - right + 46}" y="{ly + 4}">{escape(line.label)}</text>')
    for m in marks:
        x, y = px(m.x), py(m.y)
        out.append(f'<path d="M{x - 5:.1f},{y - 5:.1f} L{x + 5:.1f},{y + 5:.1f} M{x - 5:.1f},{y + 5:.1f} '
                   f'L{x + 5:.1f},{y - 5:.1f}" stroke="{m.colour}" stroke-width="2"/>'
                   f'<text x="{x - 8:.1f}" y="{y + 4 + m.dy:.1f}" text-anchor="end" fill="{m.colour}">'
                   f'{escape(m.text)}</text>')
    return out


def document(charts: Sequence[list[str]], *, width: int, height: int, columns: int = 1) -> str:
    """A standalone SVG of the charts (each ``width`` x ``height``), ``columns`` to a row."""
    rows = max(1, math.ceil(len(charts) / columns))
    cols = min(columns, max(1, len(charts)))
    total_w, total_h = width * cols, height * rows
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{total_h}" '
           f'viewBox="0 0 {total_w} {total_h}" font-family="sans-serif" font-size="12">'
           f'<rect width="{total_w}" height="{total_h}" fill="white"/>']
    if len(charts) == 1:
        out += charts[0]
    else:
        for i, chart in enumerate(charts):
            out.append(f'<g transform="translate({width * (i % cols)},{height * (i // cols)})">')
            out += chart
            out.append("</g>")
    return "\n".join(out) + "\n</svg>\n"
