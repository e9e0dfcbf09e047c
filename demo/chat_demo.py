"""The chat story: two users share a room through a real ``optimist-server``.

Alice and Bob each have a phone (a store file, the library's own background sync, the server's
tokens for their user). Alice creates the room ``chat`` (its members are the records of
``chat/$members``) and adds Bob, by mistake, as a reader. Her message shows at once as
*sending*, turns *sent*, and arrives on Bob's phone by itself. Bob's reply is refused by the
server (a reader cannot write): it stays on his screen as *failed*, with the reason. Alice makes
him a writer, Bob taps retry, and the reply goes through and arrives on Alice's phone.

A message's status is its record's status, as a subscription hears it: ``pending`` shows as
sending, ``confirmed`` as sent, ``failed`` as failed.

    python3 demo/chat_demo.py WORKDIR URL

``scripts/demo.sh`` starts the server with a tokens file (``tok-alice``, ``tok-bob``) and runs
this with ``PYTHONPATH=Bindings/python/src`` and ``OPTIMIST_LIBRARY=build/liboptimist.so``.
Every check prints a check mark or a cross; any cross makes the exit status 1.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import optimist
from optimist import put

OK, CROSS = "\u2714", "\u2718"
WAIT_S = 20
ROOM = "chat"
MESSAGES = f"{ROOM}/messages"
MEMBERS = f"{ROOM}/$members"
SHOWN = {"pending": "sending", "confirmed": "sent", "failed": "failed"}
failed = False


def check(ok: bool, text: str) -> None:
    global failed
    print(f"   {OK} {text}" if ok else f"   {CROSS} FAILED: {text}")
    if not ok:
        failed = True


def section(title: str) -> None:
    print(f"\n\u2501\u2501 {title}")


class Phone:
    """One user's phone: a store file synced as that user, and the message list a chat screen
    would draw, kept current by a subscription (no reloads)."""

    def __init__(self, user: str, workdir: str, url: str) -> None:
        self.user = user
        path = os.path.join(workdir, f"chat-{user}.optimist")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.unlink(path + suffix)
        self.store = optimist.Store(path)
        self.lock = threading.Lock()
        self.arrived: dict[str, float] = {}
        self.timeline: dict[str, list[str]] = {}
        self.store.subscribe(self._heard, coll=MESSAGES)
        # Default settings: the sync keeps a stream to the server open and pulls when poked.
        self.store.sync_start(url, headers={"Authorization": f"Bearer tok-{user}"})

    def _heard(self, changes) -> None:
        now = time.monotonic()
        with self.lock:
            for c in changes:
                if c.value is None:
                    continue
                self.arrived.setdefault(c.key, now)
                shown = SHOWN.get(c.status, c.status)
                steps = self.timeline.setdefault(c.key, [])
                if not steps or steps[-1] != shown:
                    steps.append(shown)

    def send(self, key: str, text: str) -> int:
        return self.store.mutate([put(MESSAGES, key, {"from": self.user, "text": text})], policy="keep")

    def wait(self, what, timeout_s: float = WAIT_S) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if what():
                return True
            time.sleep(0.005)
        return what()

    def status(self, key: str) -> str:
        with self.lock:
            steps = self.timeline.get(key, [])
            return steps[-1] if steps else "(none)"

    def screen(self) -> None:
        print(f"   {self.user}'s phone:")
        for key, value in self.store.scan(MESSAGES):
            print(f"     [{self.status(key):>7}] {value['from']}: {value['text']}")

    def close(self) -> None:
        self.store.close()


def main(argv: list) -> int:
    if len(argv) != 3:
        print("usage: chat_demo.py WORKDIR URL   (scripts/demo.sh runs it)", file=sys.stderr)
        return 2
    workdir, url = argv[1], argv[2]
    os.makedirs(workdir, exist_ok=True)
    alice, bob = Phone("alice", workdir, url), Phone("bob", workdir, url)
    try:
        section("Alice creates the room and adds Bob (as a reader, by mistake)")
        made = alice.store.mutate([put(MEMBERS, "alice", {"role": "owner"}), put(MEMBERS, "bob", {"role": "reader"})])
        check(alice.wait(lambda: alice.store.status(made) == "committed"), "the server created the room")
        check(bob.wait(lambda: bob.store.get(MEMBERS, "bob") == {"role": "reader"}),
              "Bob's phone sees he is a member (a reader)")

        section("Alice writes; it shows at once, is sent, and arrives on Bob's phone by itself")
        start = time.monotonic()
        alice.send("0001", "Hi Bob! Dinner at 8?")
        check(alice.status("0001") == "sending", "on Alice's screen at once, marked sending")
        check(alice.wait(lambda: alice.status("0001") == "sent"), "then marked sent (the server has it)")
        check(bob.wait(lambda: "0001" in bob.arrived), "it arrives on Bob's phone with no reload or tap")
        if "0001" in bob.arrived:
            print(f"   (on Bob's screen {1000 * (bob.arrived['0001'] - start):.0f} ms after Alice's tap)")
        alice.screen()
        bob.screen()

        section("Bob replies, but a reader cannot write: the server refuses it, the screen keeps it")
        reply = bob.send("0002", "Sounds great!")
        check(bob.wait(lambda: bob.status("0002") == "failed"), "Bob's reply is marked failed, still on his screen")
        reason = bob.store.mutation(reply)["last_error"] or ""
        print(f"   the server said: {reason}")
        check(reason.startswith("forbidden"), "the reason says why (forbidden)")
        check("0002" not in alice.arrived, "nothing of it reached Alice")
        bob.screen()

        section("Alice makes Bob a writer; Bob taps retry")
        promoted = alice.store.mutate([put(MEMBERS, "bob", {"role": "writer"})])
        check(alice.wait(lambda: alice.store.status(promoted) == "committed"), "Bob is a writer now")
        check(bob.wait(lambda: bob.store.get(MEMBERS, "bob") == {"role": "writer"}), "Bob's phone knows it")
        bob.store.retry(reply)
        check(bob.wait(lambda: bob.status("0002") == "sent"), "the retried reply is sent")
        check(alice.wait(lambda: alice.store.get(MESSAGES, "0002") is not None), "and arrives on Alice's phone")
        with bob.lock:
            steps = list(bob.timeline.get("0002", []))
        print(f"   the reply's statuses on Bob's screen: {' -> '.join(steps)}")
        check(steps[:1] == ["sending"] and "failed" in steps and steps[-1] == "sent",
              "sending -> failed -> ... -> sent, from the record's own status")
        alice.screen()
        bob.screen()
    finally:
        alice.close()
        bob.close()
    print(f"\n{CROSS} Some checks FAILED." if failed else f"\n{OK} All chat checks passed.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
