#!/usr/bin/env python3
"""Writes the readers section of BENCHMARKS.md from `optimist-bench --only readers` output.

usage: report_readers.py --before B1.jsonl [B2.jsonl ...] --after A1.jsonl [A2.jsonl ...]
       report_readers.py --column LABEL F1.jsonl [F2.jsonl ...] [--column LABEL ...] [--print]

Each file is one run of the bench (three repetitions per store kind in --quick). BEFORE is the
same bench file built against the design before the readers/writers split (one lock for
everything); runs are meant to alternate (before, after, after, before) in one session.
`--column` names each column's label (one column per commit compared); `--print` prints the
table without touching BENCHMARKS.md. The section sits between the `<!-- readers:begin -->`
and `<!-- readers:end -->` markers.
"""
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load(paths):
    rows = []
    for run, p in enumerate(paths):
        for line in Path(p).read_text().splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                if r.get("section") == "readers":
                    r["_run"] = run
                    rows.append(r)
    return rows


def paired_ratio(rows, store, bench, field, alone_bench, alone_field):
    """FIELD of BENCH ÷ ALONE_FIELD of ALONE_BENCH, in the same run and repetition."""
    alone = {(r["_run"], r["rep"]): r[alone_field] for r in rows
             if r["bench"] == alone_bench and r["store"] == store and r.get(alone_field)}
    return [r[field] / alone[(r["_run"], r["rep"])] for r in rows
            if r["bench"] == bench and r["store"] == store and r.get(field) is not None
            and (r["_run"], r["rep"]) in alone]


def pick(rows, bench, store, field):
    return [r[field] for r in rows if r["bench"] == bench and r["store"] == store and r.get(field) is not None]


def spread(values, unit, scale=1.0, digits=1):
    if not values:
        return "–"
    v = sorted(x * scale for x in values)
    med = statistics.median(v)
    return f"{med:,.{digits}f} {unit} ({v[0]:,.{digits}f}–{v[-1]:,.{digits}f})"


def spreads(rows, bench, store, fields, unit, scale, digits):
    """Several fields' spreads in one cell, separated by slashes."""
    return " / ".join(spread(pick(rows, bench, store, f), unit, scale, digits) for f in fields)


def kilo(cell):
    """A spread of thousands, each figure marked k ("–" when there is none)."""
    if cell == "–":
        return cell
    return cell.replace(" (", "k (").replace("–", "k–").replace(")", "k)")


def parse_columns(argv):
    """[(label, rows)] from --before/--after or --column LABEL files..."""
    columns, label, files = [], None, []
    args = [a for a in argv if a != "--print"]
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--before", "--after", "--column"):
            if label is not None:
                columns.append((label, load(files)))
            if a == "--column":
                label = args[i + 1]
                i += 1
            else:
                label = a[2:]
            files = []
        else:
            files.append(a)
        i += 1
    if label is not None:
        columns.append((label, load(files)))
    return columns


def main(argv):
    columns = parse_columns(argv)
    if len(columns) < 2:
        sys.exit(__doc__)
    lines = [
        "Readers beside writers (`optimist-bench --only readers`), per store kind. Each cell: the",
        "median over the runs' repetitions, then (lowest–highest). *Control*: the same reader",
        "beside a thread that spins without touching the store, i.e. what the machine's scheduler",
        "alone costs a get; beside two such threads, as many busy threads as a big batch keeps on",
        "a store file (its applier and the file's writer): three for the two vCPUs. The writers'",
        "rows: in each repetition (from the commit that added the `rounds` field), the median over",
        "ten short rounds of one writer, two and the control run side by side, each row a ratio",
        "within its round (the machine's speed drifts between seconds); before it, one long run of",
        "each, one after the other.",
        "",
        "| store | measurement | target | " + " | ".join(label for label, _ in columns) + " |",
        "|---|---|---|" + "---:|" * len(columns),
    ]
    for store in ["memory", "file"]:
        table = [
            ("longest get beside five 100k-record batches", "≤ 1 ms",
             lambda rows: spread(pick(rows, "get_beside_batches", store, "max_us"), "ms", 1e-3, 2)),
            ("p99.9 get beside those batches", "",
             lambda rows: spread(pick(rows, "get_beside_batches", store, "p999_us"), "µs")),
            ("gets over 1 ms beside those batches", "",
             lambda rows: spread(pick(rows, "get_beside_batches", store, "over_1ms"), "", 1, 0)),
            ("control: longest get beside a spinning thread", "",
             lambda rows: spread(pick(rows, "get_beside_spin", store, "max_us"), "ms", 1e-3, 2)),
            ("control: gets over 1 ms", "",
             lambda rows: spread(pick(rows, "get_beside_spin", store, "over_1ms"), "", 1, 0)),
            ("control: longest get beside two spinning threads", "",
             lambda rows: spread(pick(rows, "get_beside_two_spins", store, "max_us"), "ms", 1e-3, 2)),
            ("control: gets over 1 ms beside two spinning threads", "",
             lambda rows: spread(pick(rows, "get_beside_two_spins", store, "over_1ms"), "", 1, 0)),
            ("control: gets/s beside two spinning threads ÷ alone", "",
             lambda rows: spread(paired_ratio(rows, store, "get_beside_two_spins", "gets_per_second",
                                              "gets_per_second", "alone"), "%", 100, 0)),
            ("the five batches, writer's time", "",
             lambda rows: spread(pick(rows, "get_beside_batches", store, "writer_ms"), "ms", 1, 0)),
            ("gets/s alone", "",
             lambda rows: kilo(spread(pick(rows, "gets_per_second", store, "alone"), "", 1e-3, 0))),
            ("gets/s beside batches ÷ alone", "≥ 80%",
             lambda rows: spread(pick(rows, "gets_per_second", store, "ratio_batches"), "%", 100, 0)),
            ("gets/s beside taps ÷ alone", "≥ 80%",
             lambda rows: spread(pick(rows, "gets_per_second", store, "ratio_taps"), "%", 100, 0)),
            ("reader's share of its time running: alone / beside batches / beside taps", "",
             lambda rows: spreads(rows, "gets_per_second", store, ("cpu_share_alone", "cpu_share_batches", "cpu_share_taps"), "%", 100, 0)),
            ("gets per reader CPU-second beside batches ÷ alone", "",
             lambda rows: spread(pick(rows, "gets_per_second", store, "cpu_ratio_batches"), "%", 100, 0)),
            ("gets per reader CPU-second beside taps ÷ alone", "",
             lambda rows: spread(pick(rows, "gets_per_second", store, "cpu_ratio_taps"), "%", 100, 0)),
            ("reader's sleeps a second (voluntary switches) beside batches / taps", "",
             lambda rows: spreads(rows, "gets_per_second", store, ("sleeps_per_s_batches", "sleeps_per_s_taps"), "", 1, 0)),
            ("mutate+commit/s, two threads ÷ one", "≥ 100%",
             lambda rows: spread(pick(rows, "writers", store, "ratio"), "%", 100, 0)),
            ("control: mutate+commit/s, one thread beside a spinning thread ÷ alone", "",
             lambda rows: spread(pick(rows, "writers", store, "ratio_beside_spin"), "%", 100, 0)),
            ("vCPUs busy (process CPU ÷ wall, flush included): one writer / two", "",
             lambda rows: spreads(rows, "writers", store, ("cpus_busy_one", "cpus_busy_two"), "", 1, 2)),
            ("process CPU per mutate+commit: one writer / two", "",
             lambda rows: spreads(rows, "writers", store, ("cpu_ns_per_pair_one", "cpu_ns_per_pair_two"), "µs", 1e-3, 1)),
            ("single-threaded get, median", "no slower",
             lambda rows: spread(pick(rows, "writers", store, "get_median_us"), "µs", 1, 2)),
            ("single-threaded mutate+commit, median", "no slower",
             lambda rows: spread(pick(rows, "writers", store, "mutate_commit_median_us"), "µs", 1, 2)),
        ]
        for name, target, f in table:
            lines.append(f"| {store} | {name} | {target} | " + " | ".join(f(rows) for _, rows in columns) + " |")
    section = "\n".join(lines)
    if "--print" in argv:
        print(section)
        return
    doc = ROOT / "BENCHMARKS.md"
    text = doc.read_text()
    begin, end = "<!-- readers:begin -->", "<!-- readers:end -->"
    if begin in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + begin + "\n" + section + "\n" + end + tail
    else:
        text = text.rstrip() + "\n\n## Readers beside writers\n\n" + begin + "\n" + section + "\n" + end + "\n"
    doc.write_text(text)
    print(section)


if __name__ == "__main__":
    main(sys.argv[1:])
