"""Random bytes at the C boundary: malformed JSON, bad UTF-8 in keys and fields, non-finite
deltas, mixed with commits and rollbacks. No input may crash the library (a Swift trap would
kill this process); every call returns a documented result code, and the store stays usable."""
import random
from ctypes import byref, c_uint64, c_void_p

import pytest

from optimist._ffi import lib

OK, MISUSE, NOTFOUND, STATE, INVALID = 0, 2, 3, 4, 5

PIECES = [b"{", b"}", b"[", b"]", b'"', b"\\", b"\\u", b"d800", b":", b",", b"1", b"-", b"e", b".",
          b"null", b"true", b'"a"', b'"n"', b"\xc3", b"\xa9", b"\xff", b"\xed\xa0\x80", b" ", b"1e309",
          b"0.5", b'{"n":', b'"\\ud83d\\ude00"']


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_input_never_crashes_and_gets_documented_codes(seed: int) -> None:
    rng = random.Random(seed)

    def junk() -> bytes:
        return b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))).replace(b"\0", b"")

    s = c_void_p()
    assert lib.optimist_open(None, byref(s)) == OK
    live: list = []
    seen = set()
    try:
        for _ in range(5_000):
            b = c_void_p()
            assert lib.optimist_batch_new(byref(b)) == OK
            for _ in range(rng.randint(1, 3)):
                key = rng.choice([b"a", b"b", junk()])
                r = rng.random()
                if r < 0.4:
                    value = junk() if rng.random() < 0.7 else b'{"n":%d}' % rng.randint(-3, 3)
                    rc = lib.optimist_batch_put(b, b"c", key, value)
                elif r < 0.7:
                    rc = lib.optimist_batch_patch(b, b"c", key, junk())
                else:
                    field = rng.choice([b"n", junk()])
                    delta = rng.choice([1.0, -2.5, float("inf"), float("nan"), 1e308])
                    rc = lib.optimist_batch_incr(b, b"c", key, field, delta)
                assert rc in (OK, INVALID)
                seen.add(rc)
            out = c_uint64()
            if rng.random() < 0.7:
                rc = lib.optimist_mutate(s, b, None, byref(out))
                # MISUSE: every op was refused, so the batch is empty.
                assert rc in (OK, MISUSE, INVALID)
                if rc == OK:
                    live.append(out.value)
            else:
                assert lib.optimist_server_apply(s, b) in (OK, INVALID)
            lib.optimist_batch_free(b)
            if live and rng.random() < 0.5:
                mid = live.pop(rng.randrange(len(live)))
                rc = lib.optimist_commit(s, mid, None) if rng.random() < 0.5 else lib.optimist_rollback(s, mid, None)
                assert rc == OK
            p = c_void_p()
            rc = lib.optimist_scan(s, b"c", b"", 0, byref(p))
            assert rc == OK
            lib.optimist_free(p)
        assert seen == {OK, INVALID}
        count = c_uint64()
        assert lib.optimist_pending_count(s, byref(count)) == OK and count.value == len(live)
    finally:
        assert lib.optimist_close(s) == OK
