"""Peak memory of the reference server answering a first pull of large records.

Starts SERVER on a fresh SQLite file, pushes N records of SIZE bytes each (40 a push), then
asks one pull from the beginning (cursor null) and prints one JSON line: the server's peak RSS
(VmHWM) after the pushes and after the first page, that page's size in bytes, its change count
and how long it took. A server that cuts pages by count only builds the whole space in one
answer; one that cuts them by bytes (`--page-bytes`) stays near one page.

    python3 Benchmarks/Sync/server_page_rss.py SERVER [N] [SIZE] [-- SERVER FLAGS...]

N defaults to 2,000 records and SIZE to 100,000 bytes (200 MB in all). Run it once per
server binary: peak RSS is per process.
"""

import json
import subprocess
import sys
import tempfile
import time
import urllib.request


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/PID/status")


def post(url, path, body):
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return r.read()


def main(argv):
    flags = []
    if "--" in argv:
        flags = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    if not 1 <= len(argv) <= 3:
        sys.exit(__doc__)
    server = argv[0]
    n = int(argv[1]) if len(argv) > 1 else 2000
    size = int(argv[2]) if len(argv) > 2 else 100_000
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.Popen([server, "--port", "0", "--db", f"sqlite:{d}/rss.sqlite", *flags],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            url = p.stdout.readline().decode().split("listening on ", 1)[1].strip()
            blob = "x" * size
            for start in range(0, n, 40):
                mutations = [{"id": i + 1, "retry": 0,
                              "ops": [{"op": "put", "coll": "c", "key": f"k{i:07d}", "value": {"s": blob}}]}
                             for i in range(start, min(n, start + 40))]
                post(url, "/push", {"protocol": 1, "client_id": "rss", "mutations": mutations})
            after_pushes = peak_rss_kib(p.pid)
            t = time.perf_counter()
            body = post(url, "/pull", {"protocol": 1, "client_id": "rss", "cursor": None, "unacked": []})
            took = time.perf_counter() - t
            page = json.loads(body)
            print(json.dumps({
                "records": n, "record_bytes": size,
                "peak_rss_mib_after_pushes": round(after_pushes / 1024, 1),
                "peak_rss_mib_after_first_page": round(peak_rss_kib(p.pid) / 1024, 1),
                "first_page_bytes": len(body), "first_page_changes": len(page["changes"]),
                "first_page_s": round(took, 3)}))
        finally:
            p.terminate()
            p.wait(30)


if __name__ == "__main__":
    main(sys.argv[1:])
