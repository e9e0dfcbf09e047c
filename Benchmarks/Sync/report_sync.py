"""Sync benchmark lines (JSON, from bench_sync.py) -> results/sync.json, results/sync.md and the
sync block of BENCHMARKS.md (between the markers; appended when absent).

    python3 report_sync.py RAW.jsonl
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Benchmarks"))
from markdown_block import write_block  # noqa: E402  (after the path it lives on)

BEGIN, END = "<!-- sync:begin -->", "<!-- sync:end -->"


def table(lines):
    out = ["## Sync (library + reference server on loopback)", "",
           "`Benchmarks/run --sync` (Benchmarks/Sync/bench_sync.py): the Python package with the "
           "library's own sync against `optimist-server` (release build) on 127.0.0.1; server "
           "rows: raw HTTP clients, one process each, keep-alive, one `incr` mutation per push.", ""]
    push = [l for l in lines if l["section"] == "sync_push"]
    pull = [l for l in lines if l["section"] == "sync_pull"]
    server = [l for l in lines if l["section"] == "server_push"]
    if push or pull:
        out += ["| measurement | n | throughput | p50 | p99 |", "|---|---:|---:|---:|---:|"]
        for l in push:
            out.append(f"| mutate → committed, burst, SQLite server | {l['n']:,} | {l['mutations_per_s']:,.0f} mutations/s "
                       f"| {l['p50_us'] / 1000:,.1f} ms | {l['p99_us'] / 1000:,.1f} ms |")
        for l in pull:
            out.append(f"| pull into an empty store, SQLite server | {l['n']:,} | {l['rows_per_s']:,.0f} rows/s | – | – |")
        out.append("")
    if server:
        out += ["| server database | clients | pushes | pushes/s | p50 | p99 |", "|---|---:|---:|---:|---:|---:|"]
        for l in server:
            out.append(f"| {l['db']} | {l['clients']} | {l['n']:,} | {l['pushes_per_s']:,.0f} "
                       f"| {l['p50_us'] / 1000:,.2f} ms | {l['p99_us'] / 1000:,.2f} ms |")
        out.append("")
    out.append("Mutate → committed is measured per mutation of a burst made as fast as Python can call "
               "`mutate`: it includes waiting behind the mutations queued before it (pushes of 100 per "
               "request), and the commit event reaching a Python subscriber. Server rows: each push is one "
               "transaction, committed before the answer (SQLite WAL; PostgreSQL with its default "
               "synchronous_commit), which bounds pushes/s per client.")
    return "\n".join(out) + "\n"


def main():
    lines = [json.loads(l) for l in Path(sys.argv[1]).read_text().splitlines() if l.strip().startswith("{")]
    results = ROOT / "Benchmarks" / "results"
    (results / "sync.json").write_text(json.dumps(lines, indent=1) + "\n")
    md = table(lines)
    (results / "sync.md").write_text(md)
    write_block(ROOT / "BENCHMARKS.md", BEGIN, END, md)
    print(md)


if __name__ == "__main__":
    main()
