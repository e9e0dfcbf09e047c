import NIOCore
import Synchronization

/// The open connections, for `--max-connections`. When all slots are taken, a new connection
/// evicts the connection that has been idle longest (a keep-alive connection between requests,
/// or one that has not sent a byte yet): an idle connection costs its client only a reconnect.
/// When none is idle, every slot is a request being read or answered, and the newcomer is
/// refused (ConnectionGuard answers it 503 and closes it).
final class ConnectionRegistry: Sendable {
    typealias ID = Int

    enum Admission {
        case admitted(ID)
        case refused
    }

    private struct Entry {
        let channel: any Channel
        /// When it last became idle; nil while a request is being read or answered.
        var idleSince: NIODeadline?
    }

    private struct State {
        var next: ID = 0
        var entries: [ID: Entry] = [:]
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = limit
    }

    var count: Int { state.withLock { $0.entries.count } }

    func admit(_ channel: any Channel) -> Admission {
        let (admission, evicted): (Admission, (any Channel)?) = state.withLock { s in
            var evicted: (any Channel)?
            if s.entries.count >= limit {
                // A scan, but only while full; over a thousand entries that is microseconds,
                // and an ordered index would cost every request two updates instead.
                var oldest: (id: ID, since: NIODeadline)?
                for (id, entry) in s.entries {
                    if let since = entry.idleSince, since < (oldest?.since ?? .distantFuture) { oldest = (id, since) }
                }
                guard let oldest else { return (.refused, nil) }
                evicted = s.entries.removeValue(forKey: oldest.id)?.channel
            }
            s.next += 1
            s.entries[s.next] = Entry(channel: channel, idleSince: .now())
            return (.admitted(s.next), evicted)
        }
        // Outside the lock: closing runs the evicted channel's handlers (on its event loop).
        evicted?.close(promise: nil)
        return admission
    }

    func setIdle(_ id: ID, _ idle: Bool) {
        state.withLock { s in
            s.entries[id]?.idleSince = idle ? .now() : nil
        }
    }

    func remove(_ id: ID) {
        _ = state.withLock { s in s.entries.removeValue(forKey: id) }
    }
}
