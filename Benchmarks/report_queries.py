#!/usr/bin/env python3
"""Benchmarks/report_queries.py RAW.jsonl: the live-query benches' report (Benchmarks/run --queries).

Reads the JSON lines of Benchmarks/C/screen.c (the habit screen reloaded from SQLite after each
tap, against the tap with both live queries maintained; and the tap's cost per affected live
query) and of Benchmarks/C/query_first.c (a query's first evaluation through an index and
without), writes Benchmarks/results/queries.json, the plot Benchmarks/results/screen.png
(when matplotlib is there), and the queries block of BENCHMARKS.md (between its markers;
appended when absent)."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from markdown_block import write_block

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "Benchmarks" / "results"
BEGIN, END = "<!-- queries:begin -->", "<!-- queries:end -->"
RELOAD, LIVE = "sqlite tap + screen reload", "optimist tap, both live queries maintained"


def screen_rows(lines):
    """Per n: the reload's and the live tap's medians and p99s (µs), and their ratio."""
    by_n = {}
    for l in lines:
        if l.get("section") == "screen" and l.get("what") in (RELOAD, LIVE):
            by_n.setdefault(l["n"], {})[l["what"]] = l
    rows = []
    for n in sorted(by_n):
        r, v = by_n[n].get(RELOAD), by_n[n].get(LIVE)
        if r and v:
            rows.append({"n": n, "reload_us": r["median_us"], "reload_p99_us": r["p99_us"],
                         "live_us": v["median_us"], "live_p99_us": v["p99_us"],
                         "ratio": r["median_us"] / v["median_us"] if v["median_us"] else None})
    return rows


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report_queries: matplotlib missing, no plot", file=sys.stderr)
        return False
    ns = [r["n"] for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(ns, [r["reload_us"] for r in rows], "o-", label="SQLite: tap, then reload the screen (indexed, GROUP BY)")
    ax.plot(ns, [r["live_us"] for r in rows], "s-", label="Optimist: tap, both live queries kept current")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("logs in the store (n)")
    ax.set_ylabel("median per tap (µs)")
    ax.set_title("The habit screen after a tap")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def markdown(lines, rows, has_plot):
    out = ["### Live queries: the habit screen and first evaluations (Benchmarks/run --queries)", ""]
    try:
        rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        rev = "unknown"
    out += [f"Run {time.strftime('%Y-%m-%d')} at {rev} on {os.cpu_count()} CPUs; one run, medians of each measurement.", ""]
    if rows:
        out += ["The habit screen (this week's logs of one habit, newest first, limit 50; minutes per habit "
                "today) after each tap: SQLite reloads it with indexed queries and GROUP BY, Optimist keeps "
                "two live queries current (`Benchmarks/C/screen.c`). Medians (p99) per tap:", "",
                "| n | SQLite tap + reload | Optimist tap, live | reload ÷ live |", "|---:|---:|---:|---:|"]
        for r in rows:
            out.append(f"| {r['n']:,} | {r['reload_us']:.1f} µs ({r['reload_p99_us']:.1f}) | "
                       f"{r['live_us']:.2f} µs ({r['live_p99_us']:.2f}) | {r['ratio']:.1f}× |")
        out.append("")
        if has_plot:
            out += ["![the habit screen after a tap: SQLite reload against live queries, log-log](Benchmarks/results/screen.png)", ""]
    per = [l for l in lines if l.get("section") == "screen" and l.get("what") == "per affected live query"]
    for l in per:
        us = ", ".join(f"{x:.2f}" for x in l["us"])
        out += [f"A tap (mutate + commit) with 10 live queries open on its {l['n']:,}-record collection, every "
                f"query affected, minus the same tap with none, over 10: {us} µs per affected query "
                "(two alternations).", ""]
    first = [l for l in lines if l.get("section") == "first"]
    if first:
        out += ["A query's first evaluation, \"this week's\" 1,000 logs (`Benchmarks/C/query_first.c`): through an "
                "index on `day`, and the same rows asked so that no index fits. Medians of the rounds (the store "
                "reopened before each on a file):", "",
                "| store | n | through the index | reading the collection | RSS growth (index / collection) | defining the index |",
                "|---|---:|---:|---:|---:|---:|"]
        for l in first:
            out.append(f"| {l['store']} | {l['n']:,} | {l['index_ms']:.2f} ms | {l['scan_ms']:.1f} ms | "
                       f"{l['index_rss_mb']:.1f} / {l['scan_rss_mb']:.1f} MB | {l['define_ms']:.0f} ms |")
        out.append("")
    return "\n".join(out) + "\n"


def main():
    lines = [json.loads(l) for l in Path(sys.argv[1]).read_text().splitlines() if l.strip().startswith("{")]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "queries.json").write_text(json.dumps(lines, indent=1) + "\n")
    rows = screen_rows(lines)
    has_plot = bool(rows) and plot(rows, RESULTS / "screen.png")
    md = markdown(lines, rows, has_plot)
    write_block(ROOT / "BENCHMARKS.md", BEGIN, END, md)
    print(md)


if __name__ == "__main__":
    main()
