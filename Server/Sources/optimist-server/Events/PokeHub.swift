import Logging
import ServiceLifecycle
import Synchronization

/// The open event streams (`GET /events`) and the pokes they get: whenever a push changes a
/// space, every stream of a user who sees it is poked, and its client pulls.
///
/// Pokes are coalesced twice: the changes of every push within ``window`` are resolved to
/// users together (one read of the shared spaces' members), and a stream's mailbox holds one
/// pending poke however many arrive before it is written. A burst of a thousand pushes into one
/// space costs each member a poke or two, not a thousand pulls.
///
/// As a service it sends every stream a keepalive comment every ``keepaliveInterval`` (so that
/// clients and proxies tell a quiet stream from a dead one) and ends every stream when the
/// server shuts down.
final class PokeHub: Service, Sendable {
    /// The most streams one user may hold open at once (more: 429).
    let perUserLimit: Int
    let window: Duration
    let keepaliveInterval: Duration
    private let storage: any Storage
    private let logger: Logger

    private struct Stream {
        let user: String
        let mailbox: Mailbox
    }

    private struct State {
        var next = 0
        var streams: [Int: Stream] = [:]
        var byUser: [String: Set<Int>] = [:]
        var pending = SpaceChanges()
        var flushing = false
        var closed = false
    }

    private let state = Mutex(State())

    init(storage: any Storage, logger: Logger, perUserLimit: Int = 16, window: Duration = .milliseconds(5),
         keepaliveInterval: Duration = .seconds(15)) {
        self.storage = storage
        self.logger = logger
        self.perUserLimit = perUserLimit
        self.window = window
        self.keepaliveInterval = keepaliveInterval
    }

    enum Opened {
        case stream(id: Int, mailbox: Mailbox)
        case tooMany
        case shuttingDown
    }

    func open(user: String) -> Opened {
        state.withLock { s in
            if s.closed { return .shuttingDown }
            if s.byUser[user, default: []].count >= perUserLimit { return .tooMany }
            s.next += 1
            let mailbox = Mailbox()
            s.streams[s.next] = Stream(user: user, mailbox: mailbox)
            s.byUser[user, default: []].insert(s.next)
            return .stream(id: s.next, mailbox: mailbox)
        }
    }

    func close(_ id: Int) {
        let gone = state.withLock { s -> Mailbox? in
            guard let stream = s.streams.removeValue(forKey: id) else { return nil }
            s.byUser[stream.user]?.remove(id)
            if s.byUser[stream.user]?.isEmpty == true { s.byUser[stream.user] = nil }
            return stream.mailbox
        }
        gone?.close()
    }

    var openStreams: Int { state.withLock { $0.streams.count } }

    /// A push changed these: the streams that see them are poked within ``window``.
    func changed(_ changes: SpaceChanges) {
        let start = state.withLock { s -> Bool in
            guard !s.streams.isEmpty, !changes.isEmpty else { return false }
            s.pending.merge(changes)
            if s.flushing { return false }
            s.flushing = true
            return true
        }
        guard start else { return }
        Task {
            try? await Task.sleep(for: window)
            await flush()
        }
    }

    /// Pokes every stream: changes may have gone unheard (the database's notifications were
    /// down for a while).
    func pokeAll() {
        for mailbox in state.withLock({ $0.streams.values.map(\.mailbox) }) { mailbox.post(.poke) }
    }

    private func flush() async {
        let (changes, connected) = state.withLock { s -> (SpaceChanges, Set<String>) in
            defer {
                s.pending = SpaceChanges()
                s.flushing = false
            }
            return (s.pending, Set(s.byUser.keys))
        }
        var users = changes.users.intersection(connected)
        var shared = [String]()
        for space in changes.spaces {
            if let user = space.privateUser {
                if connected.contains(user) { users.insert(user) }
            } else if let name = space.sharedName {
                shared.append(name)
            }
        }
        if !shared.isEmpty {
            let names = shared
            do {
                let members = try await storage.read { tx in
                    var all = [String]()
                    for name in names { all += try await tx.memberUsers(space: name) }
                    return all
                }
                users.formUnion(Set(members).intersection(connected))
            } catch {
                // A needless pull costs a client little; a missed poke costs it the interval.
                logger.warning("could not read the members to poke, poking every stream: \(error)")
                users = connected
            }
        }
        let boxes = state.withLock { s in users.flatMap { s.byUser[$0] ?? [] }.compactMap { s.streams[$0]?.mailbox } }
        for mailbox in boxes { mailbox.post(.poke) }
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: self.keepaliveInterval) } } catch { break }
            for mailbox in state.withLock({ $0.streams.values.map(\.mailbox) }) { mailbox.post(.keepalive) }
        }
        closeAll()
    }

    /// Ends every stream, and refuses new ones: the server is shutting down.
    func closeAll() {
        let all = state.withLock { s -> [Mailbox] in
            s.closed = true
            return s.streams.values.map(\.mailbox)
        }
        for mailbox in all { mailbox.close() }
    }
}

/// What one stream has to write next: a poke, a keepalive, or nothing more (closed). Holds at
/// most one of each, so a stream that cannot write fast enough never piles pokes up.
final class Mailbox: Sendable {
    enum Item { case poke, keepalive }

    private struct Box {
        var poke = false
        var keepalive = false
        var closed = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let box = Mutex(Box())

    func post(_ item: Item) {
        let waiter = box.withLock { b -> CheckedContinuation<Void, Never>? in
            guard !b.closed else { return nil }
            switch item {
            case .poke: b.poke = true
            case .keepalive: b.keepalive = true
            }
            defer { b.waiter = nil }
            return b.waiter
        }
        waiter?.resume()
    }

    func close() {
        let waiter = box.withLock { b -> CheckedContinuation<Void, Never>? in
            b.closed = true
            defer { b.waiter = nil }
            return b.waiter
        }
        waiter?.resume()
    }

    /// The next item to write, waiting for one; nil once closed (or the task is cancelled).
    func next() async -> Item? {
        while true {
            let ready = box.withLock { b -> Item?? in
                if b.closed { return .some(nil) }
                if b.poke {
                    b.poke = false
                    return .some(.poke)
                }
                if b.keepalive {
                    b.keepalive = false
                    return .some(.keepalive)
                }
                return nil
            }
            if let ready { return ready }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    let now = box.withLock { b -> Bool in
                        if b.closed || b.poke || b.keepalive { return true }
                        b.waiter = c
                        return false
                    }
                    if now { c.resume() }
                }
            } onCancel: {
                close()
            }
        }
    }
}
