"""Fuzzing a live server's /push and /pull over HTTP.

Each request is one of: a valid push or pull body mutated (a member dropped, added or given a
value of another type, a huge number, a long or invalid-UTF-8 string, deep nesting, a cut or a
flipped byte), random bytes, or a well-formed request sent with an odd Content-Type, a wrong
Content-Length, chunked, or cut off. Every answer must be HTTP 2xx or 4xx, or 503 (the database
said "try again"), with a JSON body: an error object with a message, or a reply of the protocol
(a push reply naming only sent ids, in order; a pull reply with its cursor, changes, more and
outcomes). Along the way the process must stay up and /health answer; at the end an ordinary
push and pull must work and a record written before the fuzzing must be intact.

The short form (a few hundred requests per database) runs in Server/run-tests.sh. Longer:

    OPTIMIST_SERVER_FUZZ_S=600 Server/run-tests.sh -k fuzz     # ten minutes per database
    OPTIMIST_SERVER_FUZZ_SEED=7 ...                            # other random choices (default 1)
"""

import copy
import json
import os
import random
import socket
import time
import urllib.parse
import uuid

from conftest import Client, http, incr, mutation, put

SEED = int(os.environ.get("OPTIMIST_SERVER_FUZZ_SEED", "1"))
SOAK_S = float(os.environ.get("OPTIMIST_SERVER_FUZZ_S", "0"))
SHORT_REQUESTS = 300
MAX_BODY = 9 << 20
HEALTH_EVERY = 50
# What the request being checked was, for the failure message.
LAST = []

# Values of every JSON type, and of the sizes that break naive code.
ODD_VALUES = [
    None, True, False, 0, -1, 1.5, -0.0, 2 ** 53, 2 ** 53 + 1, 2 ** 64, -(2 ** 63), 10 ** 400, 1e308, 5e-324,
    "", "x", "1", "\u0000", "\ud7ff\ue000", "\U0001F600", "a" * 70_000, [], [1, "a"], {}, {"a": {"b": None}},
]


def valid_push(rng, client_id):
    ops = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["put", "patch", "delete", "incr"])
        op = {"op": kind, "coll": rng.choice(["fz", "fz2"]), "key": f"k{rng.randint(0, 20)}"}
        if kind in ("put", "patch"):
            op["value"] = {"n": rng.randint(0, 9), "s": "v", "a": [1, {"b": True}]}
        if kind == "incr":
            op["field"] = "n"
            op["delta"] = rng.choice([1, -2, 0.5])
        ops.append(op)
    return {"protocol": 1, "client_id": client_id,
            "mutations": [mutation(rng.randint(1, 1000), *ops, retry=rng.randint(0, 3)) for _ in range(rng.randint(1, 3))]}


def valid_pull(rng, client_id):
    unacked = [rng.randint(1, 1000) for _ in range(rng.randint(0, 4))]
    body = {"protocol": 1, "client_id": client_id, "cursor": rng.choice([None, "0", "1", "5"]), "unacked": unacked}
    if rng.random() < 0.3:
        body["unacked_digests"] = ["0" * 32 for _ in unacked]
    return body


def nodes(value, path=()):
    """Every (path, value) inside a JSON value, the root included."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from nodes(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from nodes(v, path + (i,))


def set_at(root, path, value):
    if not path:
        return value
    parent = root
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value
    return root


def deep(rng):
    n = rng.choice([65, 200, 257, 5000])
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
    return opener * n + "1" + closer * n


def mutate_value(rng, body):
    """The body with one structural change (a JSON value, maybe not an object any more)."""
    path, value = rng.choice(list(nodes(body)))
    roll = rng.random()
    if roll < 0.35:
        return set_at(body, path, copy.deepcopy(rng.choice(ODD_VALUES)))
    if roll < 0.5 and isinstance(value, dict) and value:
        del value[rng.choice(list(value))]
        return body
    if roll < 0.6 and isinstance(value, dict):
        value[rng.choice(["extra", "op", "id", "retry", "value", "delta", "protocol", "\u00e9"])] = copy.deepcopy(rng.choice(ODD_VALUES))
        return body
    if roll < 0.7 and isinstance(value, list):
        # Many copies of the first item, a few megabytes at most.
        size = len(json.dumps(value[:1])) + 1
        value.extend(value[:1] * min(rng.randint(1, 500), max(1, (4 << 20) // size)))
        return body
    if roll < 0.8:
        return set_at(body, path, rng.choice(["k" * rng.choice([1024, 1025, 5000, 300_000]), "\u00e9" * 600]))
    if roll < 0.9:
        return set_at(body, path, rng.choice([1e300, -1e300, 1.7976931348623157e308, 2 ** 53 - 1, 123456789.123456789]))
    nested = {}
    for _ in range(rng.choice([63, 64, 65, 300])):
        nested = {"a": nested}
    return set_at(body, path, nested)


def to_bytes(rng, value):
    text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
    data = text.encode("utf-8", "surrogatepass")
    roll = rng.random()
    if roll < 0.15 and len(data) > 2:
        # A string's bytes made invalid UTF-8 (a lone continuation byte, a truncated sequence,
        # an overlong NUL, a surrogate's encoding).
        i = data.find(b'"', rng.randrange(len(data)))
        if i >= 0:
            data = data[:i + 1] + rng.choice([b"\x80", b"\xc3", b"\xc0\x80", b"\xed\xa0\x80", b"\xff"]) + data[i + 1:]
    elif roll < 0.25 and data:
        i = rng.randrange(len(data))
        data = data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]
    elif roll < 0.32:
        data = data[:rng.randrange(len(data) + 1)]
    elif roll < 0.37:
        # Deep nesting in place of a value.
        data = data.replace(b"null", deep(rng).encode(), 1) if b"null" in data else deep(rng).encode()
    elif roll < 0.42:
        data = data + rng.choice([b"}", b" x", b"\x00", data])
    elif roll < 0.45:
        # A number too large for a double.
        data = data.replace(b"1", b"1" + b"0" * rng.choice([310, 5000]), 1)
    return data


def random_bytes(rng):
    n = rng.choice([0, 1, 2, 16, 1000])
    return bytes(rng.randrange(256) for _ in range(n))


def check_reply(status, headers, raw, path, sent_ids):
    """The answer to one request: what must hold of any answer."""
    assert status is not None, "no status line"
    assert (200 <= status < 300) or (400 <= status < 500) or status == 503, f"HTTP {status}: {raw[:300]!r}"
    try:
        body = json.loads(raw)
    except ValueError:
        raise AssertionError(f"HTTP {status} with a body that is not JSON: {raw[:300]!r}") from None
    assert isinstance(body, dict), f"HTTP {status}: {raw[:300]!r}"
    ctype = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
    assert ctype.startswith("application/json"), f"HTTP {status} with Content-Type {ctype!r}"
    if status >= 300:
        assert isinstance(body.get("error"), str) and body["error"], f"HTTP {status} without an error message: {raw[:300]!r}"
        return
    if path == "/push":
        results = body.get("results")
        assert isinstance(results, list), raw[:300]
        ids = [r.get("id") for r in results]
        # One result per mutation processed, in the order sent: a prefix of the sent ids (the
        # server may stop early, at a retry).
        assert ids == sent_ids[:len(ids)], f"results {ids[:20]} do not follow the sent ids {sent_ids[:20]}"
        for n, r in enumerate(results):
            assert r.get("status") in ("ok", "rejected", "retry"), r
            if r["status"] == "retry":
                assert n == len(results) - 1, "a result after a retry"
            if r["status"] == "rejected":
                assert isinstance(r.get("error"), str), r
    else:
        assert isinstance(body.get("cursor"), str), raw[:300]
        assert isinstance(body.get("more"), bool), raw[:300]
        assert isinstance(body.get("changes"), list), raw[:300]
        assert isinstance(body.get("outcomes"), list), raw[:300]
        for c in body["changes"]:
            assert c.get("op") in ("put", "delete") and isinstance(c.get("coll"), str) and isinstance(c.get("key"), str), c
            if c["op"] == "put":
                assert isinstance(c.get("value"), dict), c


def raw_exchange(url, head, body, timeout=30):
    """Sends `head` and `body` on a fresh connection; returns (status, headers, body bytes) of
    the first answer, or (None, {}, b"") when the server closed without one (allowed only for
    a request it could not read whole)."""
    u = urllib.parse.urlsplit(url)
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as s:
        try:
            s.sendall(head + body)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may answer and close before reading everything
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except ConnectionResetError:
            pass
    if not data:
        return None, {}, b""
    head_end = data.find(b"\r\n\r\n")
    assert head_end > 0, f"not an HTTP answer: {data[:300]!r}"
    lines = data[:head_end].decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip()] = v.strip()
    rest = data[head_end + 4:]
    lowered = {k.lower(): v for k, v in headers.items()}
    if lowered.get("transfer-encoding", "").lower() == "chunked":
        out, i = b"", 0
        while True:
            j = rest.index(b"\r\n", i)
            size = int(rest[i:j].split(b";")[0], 16)
            if size == 0:
                break
            out += rest[j + 2:j + 2 + size]
            i = j + 2 + size + 2
        rest = out
    elif "content-length" in lowered:
        rest = rest[:int(lowered["content-length"])]
    return status, headers, rest


def framed(rng, url, path, body):
    """A request sent with odd framing: (status, headers, raw, kind, read) where `read` is the
    body the server reads as the request (None: none), and kind is "whole" (the
    server got the body as declared: a JSON answer is required), "unfinished" (the body never
    completes) or "not http" (the request breaks HTTP
    itself). For the last two the server's HTTP layer may close without an answer, or answer
    400 without a body, before any of the server's own code sees a request."""
    host = urllib.parse.urlsplit(url).netloc
    ctype = rng.choice(["application/json", "text/plain", "application/x-www-form-urlencoded", "",
                        "application/json; charset=latin-1", "multipart/form-data; boundary=x", "\x7f\x01"])
    base = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
    if ctype:
        base += f"Content-Type: {ctype}\r\n"
    # A control character in a header value is not HTTP (RFC 9110, 5.5).
    valid = "not http" if any(ord(ch) < 0x20 or ord(ch) == 0x7f for ch in ctype) else "whole"
    kind = rng.choice(["plain", "chunked", "short", "long", "none", "cut"])
    LAST.append(f"framing {kind}, Content-Type {ctype!r}")
    if kind == "plain":
        return (*raw_exchange(url, f"{base}Content-Length: {len(body)}\r\n\r\n".encode("latin-1"), body), valid, body)
    if kind == "chunked":
        cuts = sorted(rng.sample(range(len(body) + 1), min(3, len(body) + 1)))
        pieces = [body[a:b] for a, b in zip([0] + cuts, cuts + [len(body)]) if b > a]
        chunks = b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in pieces) + b"0\r\n\r\n"
        return (*raw_exchange(url, f"{base}Transfer-Encoding: chunked\r\n\r\n".encode("latin-1"), chunks), valid, body)
    if kind == "short":
        # Declares less than it sends: the server reads a prefix, and the rest is not HTTP.
        n = rng.randrange(len(body) + 1)
        return (*raw_exchange(url, f"{base}Content-Length: {n}\r\n\r\n".encode("latin-1"), body), valid, body[:n])
    if kind == "long":
        # Declares more than it sends, then closes its side: the body never completes.
        extra = rng.randint(1, 1000)
        return (*raw_exchange(url, f"{base}Content-Length: {len(body) + extra}\r\n\r\n".encode("latin-1"), body), "unfinished", None)
    if kind == "none":
        # No length: an HTTP/1.1 request without one has no body, and what follows is not HTTP.
        return (*raw_exchange(url, f"{base}\r\n".encode("latin-1"), body), valid, b"")
    # Cut in the middle of the headers.
    return (*raw_exchange(url, base.encode("latin-1")[:rng.randrange(len(base))], b""), "unfinished", None)


def sent_ids(body):
    """The mutation ids of a push body, as far as it is JSON (a result must name them)."""
    try:
        parsed = json.loads(body or b"")
        if isinstance(parsed, dict) and isinstance(parsed.get("mutations"), list):
            return [m.get("id") for m in parsed["mutations"] if isinstance(m, dict)]
    except (ValueError, RecursionError):
        pass
    return []


def one_request(rng, server, client_ids):
    path = rng.choice(["/push", "/pull"])
    client_id = rng.choice(client_ids)
    valid = valid_push(rng, client_id) if path == "/push" else valid_pull(rng, client_id)
    roll = rng.random()
    if roll < 0.55:
        value = valid
        for _ in range(rng.randint(1, 3)):
            value = mutate_value(rng, value)
        data = to_bytes(rng, value)
    elif roll < 0.65:
        data = random_bytes(rng)
    else:
        data = to_bytes(rng, valid) if rng.random() < 0.7 else json.dumps(valid).encode()
    # Bodies stay under the server's default limit but for a few (the limit has its own tests in
    # test_bad_input.py): a client that sends far more than the server reads is left blocked.
    data = data[:MAX_BODY]
    LAST[:] = [f"POST {path} {data[:200]!r}{'...' if len(data) > 200 else ''} ({len(data)} bytes)"]
    read = data
    if rng.random() < 0.25:
        status, headers, raw, kind, read = framed(rng, server.url, path, data)
        if status is None:
            assert kind != "whole", "the server closed without answering a whole request"
            return path, None
        if kind != "whole" and raw == b"":
            # The HTTP layer's own refusal of a request it could not parse or finish.
            assert status == 400, f"HTTP {status} to a request that is {kind}"
            return path, status
    else:
        r = http("POST", server.url + path, data, {"Content-Type": "application/json"})
        status, headers, raw = r.status, r.headers, r.raw
    check_reply(status, headers, raw, path, sent_ids(read))
    return path, status


def assert_up(server, why):
    assert server.proc.poll() is None, f"the server exited ({server.proc.returncode}) {why}:\n{server.read_log()[-3000:]}"
    r = http("GET", server.url + "/health")
    assert r.status == 200, f"/health answered {r} {why}"


def test_fuzzed_push_and_pull_get_well_formed_answers(server):
    rng = random.Random(SEED)
    keeper = Client(server)
    coll = "keep-" + uuid.uuid4().hex
    keeper.push([mutation(1, put(coll, "k", {"n": 0}), incr(coll, "k", "n", 1))])
    client_ids = [str(uuid.uuid4()) for _ in range(3)] + ["c", "\u00e9" * 66]

    statuses = {}
    deadline = time.monotonic() + SOAK_S
    n = 0
    while (n < SHORT_REQUESTS) if SOAK_S <= 0 else (time.monotonic() < deadline):
        try:
            path, status = one_request(rng, server, client_ids)
        except Exception as e:  # noqa: BLE001 - a timeout or a reset is a finding too
            raise AssertionError(f"request {n} (seed {SEED}): {e!r}\n  request: {'; '.join(LAST)}") from None
        statuses[(path, status)] = statuses.get((path, status), 0) + 1
        n += 1
        if n % HEALTH_EVERY == 0:
            assert_up(server, f"after {n} fuzzed requests")

    assert_up(server, f"after {n} fuzzed requests")
    # An ordinary client still works, and the record written before is as it was.
    after = Client(server)
    results = after.push([mutation(1, incr(coll, "k", "n", 1))])
    assert results[0]["status"] == "ok", results
    state = after.state()
    assert state[(coll, "k")] == {"n": 2}, state.get((coll, "k"))
    assert [(o["id"], o["status"]) for o in keeper.pull(unacked=[1])["outcomes"]] == [(1, "ok")]
    # The fuzzing reached past the JSON parser: some requests were accepted, some refused.
    assert any(s == 200 for (_, s) in statuses), statuses
    assert any(s == 400 for (_, s) in statuses), statuses
    print(f"server fuzz: {n} requests, answers {dict(sorted(statuses.items(), key=str))}")
