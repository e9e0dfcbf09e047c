"""Peak memory of a first pull: a fresh store file pulls N small records in pages, through the
library's own sync, from a server played by a Python transport (pages built on demand, so the
script itself stays small). Prints one JSON line: the process's peak RSS before the sync and at
its end (ru_maxrss), and how long the pull took.

    OPTIMIST_LIBRARY=/path/to/liboptimist.so python3 Benchmarks/Sync/first_pull_rss.py [N] [PAGE]

N defaults to 200,000 records (~100 bytes of JSON each), PAGE to 5,000 changes a page (the
reference server's default --page-size). Run it once per library: peak RSS is per process.
"""

import json
import os
import resource
import sys
import tempfile
import time

import optimist


def page_body(n, page, cursor):
    start = int(cursor) if cursor else 0
    end = min(n, start + page)
    changes = [{"op": "put", "coll": "logs", "key": f"k{i:08d}",
                "value": {"habit": f"habit-{i % 50}", "day": i, "done": i % 3 == 0, "note": "a short note of forty bytes or so ..."}}
               for i in range(start, end)]
    return json.dumps({"changes": changes, "cursor": str(end), "more": end < n, "outcomes": []})


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    page = int(sys.argv[2]) if len(sys.argv) > 2 else 5_000
    pulls = [0]

    def transport(endpoint, url, body, headers, timeout_ms):
        if endpoint != "pull":
            return 200, json.dumps({"results": []})
        pulls[0] += 1
        return 200, page_body(n, page, json.loads(body)["cursor"])

    with tempfile.TemporaryDirectory() as d:
        store = optimist.Store(os.path.join(d, "first.db"))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.monotonic()
        store.sync_start(transport=transport, pull_interval_ms=0)
        idle = store.sync_wait_idle(3600)
        took = time.monotonic() - started
        status = store.sync_status()
        store.sync_stop()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # before the check below reads everything
        store.view_define("n", "logs", "", "count")  # one SQL count over the file
        count = int(store.view_get("n"))
        store.close()
    print(json.dumps({"section": "first_pull_rss", "library": os.environ.get("OPTIMIST_LIBRARY"), "records": n,
                      "page": page, "pulls": pulls[0], "records_after": count, "pulled": status["pulled"],
                      "peak_rss_before_sync_mib": round(before / 1024, 1), "peak_rss_mib": round(peak / 1024, 1),
                      "seconds": round(took, 2)}))


if __name__ == "__main__":
    main()
