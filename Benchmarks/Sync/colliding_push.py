"""Times one push whose record holds N member names made to collide under Optimist's old
unkeyed key hash (Tests/Adversarial/colliding_names.c), through a real optimist-server on a
throwaway SQLite file. Quadratic before keys were hashed with a per-process secret; linear now.

    python3 Benchmarks/Sync/colliding_push.py SERVER_BINARY 20000,40000
"""

import pathlib
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    binary, counts = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
    work = pathlib.Path(tempfile.mkdtemp())
    exe = work / "colliding_names"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(ROOT / "Tests/Adversarial/colliding_names.c")], check=True)
    names = subprocess.run([str(exe), str(max(counts))], check=True, capture_output=True, text=True).stdout.split("\n")
    server = subprocess.Popen([binary, "--port", "0", "--db", f"sqlite:{work}/s.sqlite", "--max-body", str(64 << 20)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = server.stdout.readline().strip().split()[-1]
    try:
        for n in counts:
            value = "{" + ",".join(f'"{names[i]}":{i}' for i in range(n)) + "}"
            body = ('{"protocol":1,"client_id":"bench","mutations":[{"id":%d,"ops":[{"op":"put","coll":"c",'
                    '"key":"k%d","value":%s}]}]}' % (n, n, value))
            started = time.perf_counter()
            request = urllib.request.Request(url + "/push", data=body.encode(), headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=3600) as reply:
                reply.read()
            print(f"{n} colliding names: push answered in {time.perf_counter() - started:.3f} s")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
