"""Stopping: SIGTERM drains and exits 0; kill -9 mid-load loses nothing that was answered, and
applies nothing twice when the client re-sends after the restart."""

import http.client
import json
import signal
import socket
import threading
import time

from conftest import Client, http as request, incr, mutation


class Load:
    """Client threads pushing incr mutations until the server goes away."""

    def __init__(self, server, clients=4, batch=4):
        self.server = server
        self.batch = batch
        self.clients = [f"load-{i}" for i in range(clients)]
        self.acked = {c: set() for c in self.clients}      # ids answered ok
        self.inflight = {c: [] for c in self.clients}      # the batch sent when the server went away
        self.statuses = []
        self.enough = threading.Event()
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run, args=(c,)) for c in self.clients]

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def join(self):
        for t in self.threads:
            t.join(120)
        assert not any(t.is_alive() for t in self.threads)

    def run(self, client_id):
        c = Client(self.server, client_id=client_id)
        next_id = 1
        while next_id < 100000:
            batch = [mutation(i, incr("load", "total", "n", 1), incr("load", client_id, "n", 1))
                     for i in range(next_id, next_id + self.batch)]
            try:
                r = c.push_raw(batch)
            except (OSError, http.client.HTTPException):
                self.inflight[client_id] = batch  # no answer: maybe applied, maybe not
                return
            with self.lock:
                self.statuses.append(r.status)
            if r.status != 200:
                continue
            for result in r.json["results"]:
                if result["status"] != "ok":
                    break
                self.acked[client_id].add(result["id"])
                next_id = result["id"] + 1
            with self.lock:
                if sum(len(a) for a in self.acked.values()) >= 200:
                    self.enough.set()

    def reconcile(self, server):
        """After a restart: ask for the in-flight ids' outcomes, check the totals, re-send them."""
        unknown_ok = 0
        for cid in self.clients:
            ids = [m["id"] for m in self.inflight[cid]]
            outcomes = Client(server, client_id=cid).pull(unacked=ids)["outcomes"]
            assert all(o["status"] == "ok" for o in outcomes)
            unknown_ok += len(outcomes)
            self.acked[cid] |= {o["id"] for o in outcomes}
        state = Client(server).state()
        acked_total = sum(len(a) for a in self.acked.values())
        assert acked_total > 0
        # Every answered pair is there exactly once, and nothing else is.
        assert state.get(("load", "total"), {"n": 0})["n"] == acked_total
        for cid in self.clients:
            assert state.get(("load", cid), {"n": 0})["n"] == len(self.acked[cid])
            assert self.acked[cid] == set(range(1, len(self.acked[cid]) + 1)), "in order, no gaps"
        # The client re-sends what it never heard about: each pair is then applied once.
        for cid in self.clients:
            if self.inflight[cid]:
                results = Client(server, client_id=cid).push(self.inflight[cid])
                assert all(r["status"] == "ok" for r in results)
                self.acked[cid] |= {r["id"] for r in results}
        state = Client(server).state()
        assert state[("load", "total")]["n"] == sum(len(a) for a in self.acked.values())
        return unknown_ok


def test_sigterm_exits_zero(server):
    Client(server).push([mutation(1, incr("c", "k", "n", 1))])
    assert server.terminate(signal.SIGTERM) == 0
    assert "stopped" in server.read_log()


def test_sigint_exits_zero(server):
    assert server.terminate(signal.SIGINT) == 0


def tcp_queues(local_port, remote_port):
    """(tx_queue, rx_queue) of the IPv4 socket local_port -> remote_port, from /proc/net/tcp."""
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            local, remote, queues = fields[1], fields[2], fields[4]
            if int(local.split(":")[1], 16) == local_port and int(remote.split(":")[1], 16) == remote_port:
                tx, rx = queues.split(":")
                return int(tx, 16), int(rx, 16)
    return None


def wait_until(condition, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.01)


def refuses_connections(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return False
    except OSError:
        return True


def test_sigterm_drains_a_request_in_flight(server):
    """A push whose body is half sent when SIGTERM arrives is still processed and answered."""
    port = int(server.url.rsplit(":", 1)[1])
    body = json.dumps({"protocol": 1, "client_id": "drain",
                       "mutations": [mutation(1, incr("c", "k", "n", 1))]}).encode()
    head = (f"POST /push HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.sendall(head + body[:10])
    client_port = sock.getsockname()[1]
    # The server has read everything sent so far: the request is in flight in the server.
    wait_until(lambda: tcp_queues(client_port, port) == (0, 0) and tcp_queues(port, client_port) == (0, 0),
               "the server read the request head")
    server.proc.send_signal(signal.SIGTERM)
    wait_until(lambda: refuses_connections(port), "the server stopped accepting connections")
    sock.sendall(body[10:])
    reply = b""
    while chunk := sock.recv(65536):
        reply += chunk
    sock.close()
    status_line, _, rest = reply.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 200"), reply
    answer = json.loads(rest.split(b"\r\n\r\n", 1)[1])
    assert answer["results"][0]["status"] == "ok"
    assert server.terminate() == 0


def test_sigterm_under_load_answers_what_it_accepted(start_server):
    server = start_server()
    load = Load(server).start()
    assert load.enough.wait(120), "the load never got going"
    assert server.terminate(signal.SIGTERM) == 0
    load.join()
    # Draining: no request was cut off with a server error.
    assert all(s == 200 for s in load.statuses), set(load.statuses)
    restarted = start_server()
    load.reconcile(restarted)


def test_kill_9_mid_load_then_restart_loses_nothing(start_server):
    server = start_server()
    load = Load(server).start()
    assert load.enough.wait(120), "the load never got going"
    assert server.terminate(signal.SIGKILL) == -signal.SIGKILL
    load.join()
    restarted = start_server()
    assert request("GET", restarted.url + "/health").status == 200
    load.reconcile(restarted)
