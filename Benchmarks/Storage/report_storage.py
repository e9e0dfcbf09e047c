#!/usr/bin/env python3
"""Writes the storage section of BENCHMARKS.md from `optimist-bench --only storage` output.

usage: report_storage.py AFTER.jsonl [BEFORE.jsonl]

BEFORE (optional) is the same benchmark run on the previous design, shown side by side; it
is kept as Benchmarks/results/storage-before.jsonl. The section sits between the
`<!-- storage:begin -->` and `<!-- storage:end -->` markers.
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load(path):
    rows = {}
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            rows[(r["kind"], r.get("store", ""))] = r
    return rows


def fmt_us(v):
    return "–" if v is None else f"{v:.2f} µs"


def main():
    after = load(sys.argv[1])
    before = load(sys.argv[2]) if len(sys.argv) > 2 else {}

    def get(rows, kind, store, field):
        r = rows.get((kind, store))
        return None if r is None else r.get(field)

    lines = []
    def row(name, target, field_kind, store, field, fmt):
        b, a = get(before, field_kind, store, field), get(after, field_kind, store, field)
        lines.append(f"| {name} | {target} | {fmt(b) if b is not None else '–'} | {fmt(a) if a is not None else '–'} |")

    n = next(iter(after.values()))["n"]
    json_mb = get(after, "memory_rss", "", "json_mb")
    lines.append("<!-- storage:begin -->")
    lines.append("## Storage at scale (1M records)")
    lines.append("")
    lines.append(f"`Benchmarks/run --storage` (Benchmarks/Swift/Storage.swift): {n:,} habit logs, {json_mb:.0f} MB of JSON "
                 "(~109 B each). Memory is RSS from /proc/self/statm, measured in a fresh child process; open figures are "
                 "medians of 5 child processes. *before*: the same benchmark built on the design before storage issue 13 "
                 "(every record parsed into memory at open; commit c941359), measured on 2026-11-22 on this machine "
                 "(Benchmarks/results/storage-before.jsonl); *after*: the latest run (Benchmarks/results/storage.jsonl). "
                 "The two runs are from different sessions, so the machine's speed differed: the SQLite row shows by how "
                 "much. The SQLite row times the query a miss runs, "
                 "`SELECT value FROM records WHERE coll = ? AND key = ?`, through the C API alone on the same file, keys and "
                 "pragmas: the floor under the store's miss on this machine.")
    lines.append("")
    lines.append("| measurement | target | before | after |")
    lines.append("|---|---|---:|---:|")
    row("open a 1M-record store file and read one record", "≤ 100 ms", "open_read_one", "", "open_ms_median", lambda v: f"{v:,.1f} ms")
    row("RSS growth of that open", "≤ cache (32 MiB) + 50 MB", "open_read_one", "", "rss_growth_mb_median", lambda v: f"{v:,.1f} MB")
    row("in-memory store RSS / JSON size", "≤ 2.5x", "memory_rss", "", "ratio", lambda v: f"{v:.2f}x")
    row("bulk server_apply, file-backed (the call)", "≥ 300k rows/s", "server_apply", "file", "rows_per_s_median", lambda v: f"{v/1000:,.0f}k rows/s")
    row("bulk server_apply, file-backed, until flushed", "–", "server_apply", "file", "rows_per_s_with_flush", lambda v: f"{v/1000:,.0f}k rows/s")
    row("bulk server_apply, in memory", "≥ 300k rows/s", "server_apply", "memory", "rows_per_s_median", lambda v: f"{v/1000:,.0f}k rows/s")
    row("get, cache hit (p50)", "≤ 0.3 µs", "get_hit", "", "median_us", fmt_us)
    row("get, random key of 1M (mostly from the file; p50)", "≤ 5 µs", "get_random", "", "median_us", fmt_us)
    row("get, random key (p99)", "–", "get_random", "", "p99_us", fmt_us)
    row("the same point query through SQLite's C API alone (p50)", "–", "sqlite_point_read", "", "median_us", fmt_us)
    row("tap on the 1M-record file store (mutate + view read; p50)", "no slower", "tap", "file", "median_us", fmt_us)
    row("reopen with 100k pending (open + pending_count + close; p50 of 5)", "≤ 250 ms", "reopen", "", "median_us", lambda v: f"{v/1000:,.0f} ms")
    row("of which the open alone (p50 of 5)", "–", "reopen", "", "open_only_median_us", lambda v: f"{v/1000:,.0f} ms")
    lines.append("")
    lines.append("<!-- storage:end -->")
    block = "\n".join(lines)

    md = ROOT / "BENCHMARKS.md"
    text = md.read_text()
    if "<!-- storage:begin -->" in text:
        head, rest = text.split("<!-- storage:begin -->", 1)
        _, tail = rest.split("<!-- storage:end -->", 1)
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    md.write_text(text)
    out = ROOT / "Benchmarks/results"
    (out / "storage.jsonl").write_text(Path(sys.argv[1]).read_text())
    if len(sys.argv) > 2:
        (out / "storage-before.jsonl").write_text(Path(sys.argv[2]).read_text())
    print(block)


if __name__ == "__main__":
    main()
