#!/usr/bin/env python3
"""Draws benches/peers/herd_limit.tsv (from herd_limit.sh) as a log-log SVG: CPU seconds and
peak memory against clients, the engine's two paths beside the herd-limit yardsticks.
Standard library only.  Usage: herd_limit_chart.py TSV SVG"""
import math
import sys

SERIES = [  # (what in the TSV, label, colour, dashed)
    ("direct", "retrystorm, direct path", "#1f77b4", False),
    ("event-loop", "retrystorm, event loop forced", "#d62728", False),
    ("herd-limit", "herd-limit (no queue)", "#2ca02c", True),
    ("herd-limit-queue", "herd-limit queue (calendar queue)", "#ff7f0e", True),
]
W, H = 440, 330  # one panel
L, R, T, B = 64, 16, 34, 46


def panel(rows, col, title, unit, x0):
    pts = [(r["clients"], r[col]) for r in rows if r[col] > 0]
    xs = [math.log10(c) for c, _ in pts]
    ys = [math.log10(v) for _, v in pts]
    xlo, xhi = math.floor(min(xs)), math.ceil(max(xs))
    ylo, yhi = math.floor(min(ys)), math.ceil(max(ys))
    px = lambda x: x0 + L + (x - xlo) / (xhi - xlo) * (W - L - R)
    py = lambda y: T + (yhi - y) / (yhi - ylo) * (H - T - B)
    out = [f'<text x="{x0 + W / 2}" y="20" text-anchor="middle" font-weight="bold">{title}</text>']
    out.append(f'<rect x="{x0 + L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="#444"/>')
    for e in range(xlo, xhi + 1):
        x = px(e)
        out.append(f'<line x1="{x}" y1="{T}" x2="{x}" y2="{H - B}" stroke="#ddd"/>')
        out.append(f'<text x="{x}" y="{H - B + 16}" text-anchor="middle">10^{e}</text>')
    for e in range(ylo, yhi + 1):
        y = py(e)
        out.append(f'<line x1="{x0 + L}" y1="{y}" x2="{x0 + W - R}" y2="{y}" stroke="#ddd"/>')
        label = f"{10.0 ** e:g}"
        out.append(f'<text x="{x0 + L - 6}" y="{y + 4}" text-anchor="end">{label}</text>')
    out.append(f'<text x="{x0 + (L + W - R) / 2}" y="{H - 8}" text-anchor="middle">clients</text>')
    out.append(f'<text x="{x0 + 14}" y="{(T + H - B) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 {x0 + 14} {(T + H - B) / 2})">{unit}</text>')
    for what, _, colour, dashed in SERIES:
        s = sorted((r["clients"], r[col]) for r in rows if r["what"] == what and r[col] > 0)
        if not s:
            continue
        path = " ".join(f"{px(math.log10(c)):.1f},{py(math.log10(v)):.1f}" for c, v in s)
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for c, v in s:
            out.append(f'<circle cx="{px(math.log10(c)):.1f}" cy="{py(math.log10(v)):.1f}" r="3" fill="{colour}"/>')
    return out


def main():
    tsv, svg = sys.argv[1], sys.argv[2]
    lines = [l.rstrip("\n").split("\t") for l in open(tsv) if l.strip()]
    head = lines[0]
    rows = []
    for l in lines[1:]:
        r = dict(zip(head, l))
        rows.append({"what": r["what"], "clients": int(r["clients"]),
                     "cpu_s": max(float(r["cpu_s"]), 0.001), "peak_mb": float(r["peak_mb"])})
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * W}" height="{H + 70}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{2 * W}" height="{H + 70}" fill="white"/>']
    out += panel(rows, "cpu_s", "The herd (full jitter): CPU time", "CPU seconds (user + sys)", 0)
    out += panel(rows, "peak_mb", "Peak memory (RSS)", "MB", W)
    for i, (_, label, colour, dashed) in enumerate(SERIES):
        x, y = 40 + (i % 2) * W, H + 22 + (i // 2) * 20
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        out.append(f'<line x1="{x}" y1="{y}" x2="{x + 30}" y2="{y}" stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{x + 38}" y="{y + 4}">{label}</text>')
    out.append("</svg>")
    open(svg, "w").write("\n".join(out) + "\n")


main()
