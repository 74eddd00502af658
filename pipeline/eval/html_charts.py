"""The evaluation report's small drawing kit: values formatted for a table cell, and SVG plots (axes, lines, bars,
legends) drawn inline, so the report is one self-contained file with no script and nothing fetched."""
from __future__ import annotations

import html
import math
from typing import Any


DASH = "–"
_RATE_SUFFIXES = ("_rate", "accuracy", "recall", "precision", "exactness")


def _e(v: Any) -> str:
    """HTML-escape any value (None becomes empty)."""
    return html.escape("" if v is None else str(v), quote=True)


def _isnum(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _pct(v: Any) -> str:
    return f"{100 * v:.1f}%" if _isnum(v) else DASH


def _num(v: Any, nd: int = 0) -> str:
    if not _isnum(v):
        return DASH
    return str(v) if isinstance(v, int) else f"{v:.{nd}f}"


def _txt(v: Any) -> str:
    return DASH if v is None or v == "" else _e(v)


def _get(obj: Any, *keys: str) -> Any:
    """Nested dict lookup that returns None instead of raising."""
    for k in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(k)
    return obj


def _dict(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _dicts(v: Any) -> list[dict]:
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def _is_rate(metric: str, values: list[Any]) -> bool:
    vals = [v for v in values if _isnum(v)]
    if metric.endswith(_RATE_SUFFIXES) and all(0 <= v <= 1 for v in vals):
        return True
    return bool(vals) and all(isinstance(v, float) and 0 <= v <= 1 for v in vals)


class _Plot:
    """A rectangle inside an SVG with linear x and y scales."""

    def __init__(self, x0: float, y0: float, w: float, h: float,
                 xr: tuple[float, float] = (0.0, 1.0), yr: tuple[float, float] = (0.0, 1.0)):
        self.x0, self.y0, self.w, self.h = x0, y0, w, h
        self.xr = xr if xr[1] > xr[0] else (xr[0] - 0.5, xr[0] + 0.5)
        self.yr = yr if yr[1] > yr[0] else (yr[0] - 0.5, yr[0] + 0.5)

    def x(self, v: float) -> float:
        return self.x0 + (v - self.xr[0]) / (self.xr[1] - self.xr[0]) * self.w

    def y(self, v: float) -> float:
        return self.y0 + self.h - (v - self.yr[0]) / (self.yr[1] - self.yr[0]) * self.h


def _svg(w: int, h: int, label: str, body: str) -> str:
    return (f'<svg width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{_e(label)}">'
            f"<title>{_e(label)}</title>{body}</svg>")


def _text(x: float, y: float, s: str, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{_e(s)}</text>'


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str = "#d0d7de", extra: str = "") -> str:
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}"{extra}/>'


def _axes(p: _Plot, xticks: list[tuple[float, str]], yticks: list[tuple[float, str]],
          xlabel: str = "", ylabel: str = "") -> str:
    """Grid lines, tick labels and axis titles for a plot."""
    out = [f'<rect x="{p.x0}" y="{p.y0}" width="{p.w}" height="{p.h}" fill="none" stroke="#8c959f"/>']
    for v, lab in xticks:
        out += [_line(p.x(v), p.y0, p.x(v), p.y0 + p.h), _text(p.x(v), p.y0 + p.h + 14, lab, "middle")]
    for v, lab in yticks:
        out += [_line(p.x0, p.y(v), p.x0 + p.w, p.y(v)), _text(p.x0 - 5, p.y(v) + 4, lab, "end")]
    if xlabel:
        out.append(_text(p.x0 + p.w / 2, p.y0 + p.h + 30, xlabel, "middle"))
    if ylabel:
        cx, cy = p.x0 - 38, p.y0 + p.h / 2
        out.append(_text(cx, cy, ylabel, "middle", f' transform="rotate(-90 {cx:.1f} {cy:.1f})"'))
    return "".join(out)


def _legend(x: float, y: float, items: list[tuple[str, str]]) -> str:
    out = []
    for name, color in items:
        out += [f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{color}"/>', _text(x + 14, y, name)]
        x += 28 + 7.2 * len(name)
    return "".join(out)


def _polyline(p: _Plot, pts: list[tuple[float, float]], color: str, dash: bool = False) -> str:
    coords = " ".join(f"{p.x(a):.1f},{p.y(b):.1f}" for a, b in pts)
    d = ' stroke-dasharray="5,4"' if dash else ""
    return f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2"{d}/>'


def _pct_ticks(n: int = 4) -> list[tuple[float, str]]:
    return [(i / n, f"{100 * i // n}%") for i in range(n + 1)]


def _hbars(label: str, groups: list[tuple[str, list[Any]]], series: list[tuple[str, str]],
           rate: bool = True) -> str:
    """Grouped horizontal bars: one group per label, one bar per series; None values show a dash."""
    vals = [v for _, vs in groups for v in vs if _isnum(v)]
    vmax = 1.0 if rate else float(max(vals + [1]))
    bar, lw, pw = 12, 290, 340
    gh = bar * len(series) + 10
    top = 24 if len(series) > 1 else 8
    p = _Plot(lw, top, pw, gh * len(groups), (0.0, vmax))
    ticks = _pct_ticks() if rate else [(vmax * i / 4, f"{vmax * i / 4:.4g}") for i in range(5)]
    out = [_axes(p, ticks, [])]
    if len(series) > 1:
        out.append(_legend(lw, 14, series))
    for gi, (name, vs) in enumerate(groups):
        gy = top + gi * gh + 5
        short = name if len(name) <= 44 else name[:43] + "…"
        out.append(_text(lw - 6, gy + bar * len(series) / 2 + 4, short, "end"))
        for si, (_, color) in enumerate(series):
            v = vs[si] if si < len(vs) else None
            y = gy + si * bar
            if not _isnum(v):
                out.append(_text(lw + 4, y + bar - 2, DASH))
                continue
            w = max(p.x(min(max(v, 0), vmax)) - lw, 0.5)
            out.append(f'<rect x="{lw}" y="{y:.1f}" width="{w:.1f}" height="{bar - 2}" fill="{color}"/>')
            out.append(_text(lw + w + 4, y + bar - 2, _pct(v) if rate else _num(v, 2)))
    return _svg(lw + pw + 60, int(p.y0 + p.h + 22), label, "".join(out))
