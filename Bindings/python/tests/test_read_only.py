"""A second process reads a store file another process holds open: ``Store(path,
read_only=True)`` never raises BusyError, sees what the holder had flushed when it opened (its
pending mutations too, as the visible state), refuses every change, and the holder's writes and
flushes go on unharmed meanwhile."""

import os
import subprocess
import sys
import textwrap

import pytest

import optimist
from conftest import SRC, library_path

HOLDER = textwrap.dedent("""
    import sys, optimist
    s = optimist.Store(sys.argv[1])
    s.server_apply([optimist.put("logs", "d1", {"done": True})])
    mid = s.mutate([optimist.put("logs", "d2", {"done": False})])
    s.flush()
    print(mid, flush=True)
    for line in sys.stdin:                      # each line: write and flush once more
        s.mutate([optimist.put("logs", line.strip(), {})])
        s.flush()
        print("flushed", flush=True)
    s.close()
""")


def test_a_second_process_reads_while_the_first_holds_the_file(tmp_path):
    path = str(tmp_path / "app.db")
    env = dict(os.environ, OPTIMIST_LIBRARY=library_path(), PYTHONPATH=str(SRC))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env)
    try:
        pending = int(holder.stdout.readline())
        with pytest.raises(optimist.BusyError):
            optimist.Store(path)
        with optimist.Store(path, read_only=True) as reader:
            assert reader.get("logs", "d1") == {"done": True}
            assert reader.get("logs", "d2") == {"done": False}       # pending in the holder: visible
            assert reader.status(pending) == "pending"
            assert [k for k, _ in reader.scan("logs")] == ["d1", "d2"]
            for change in (lambda: reader.mutate([optimist.put("logs", "x", {})]),
                           lambda: reader.commit(pending),
                           lambda: reader.server_apply([optimist.delete("logs", "d1")]),
                           lambda: reader.outbox_next(0)):
                with pytest.raises(optimist.MisuseError):
                    change()
            # The holder writes and flushes while the reader is open.
            holder.stdin.write("d3\n")
            holder.stdin.flush()
            assert holder.stdout.readline().strip() == "flushed"
            assert reader.get("logs", "d3") is None                  # the file as it was at the open
        with optimist.Store(path, read_only=True) as again:
            assert again.get("logs", "d3") == {}
    finally:
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0


def test_read_only_needs_a_file_and_no_local_only(tmp_path):
    with pytest.raises(optimist.MisuseError):
        optimist.Store(read_only=True)
    with pytest.raises(optimist.MisuseError):
        optimist.Store(tmp_path / "x.db", read_only=True, local_only=True)
    with pytest.raises(optimist.StoreIOError):
        optimist.Store(tmp_path / "missing.db", read_only=True)
    with pytest.raises(optimist.MisuseError):
        optimist.Store(tmp_path / "x.db", read_only="yes")
