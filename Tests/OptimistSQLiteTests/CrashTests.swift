#if canImport(Glibc)
import Glibc
#endif
import Testing
import OptimistCore
import OptimistOpen
import OptimistSQLite
import OptimistModel

/// Kill -9 at many points: whatever was flushed survives, nothing is torn, nothing is reused.
///
/// The child (`optimist-crash-child run`) makes a seeded sequence of store calls on a file,
/// one call per step, flushing at known steps and printing "flushed STEP" after each flush
/// returned. The same child replays the sequence in memory (`model`) and prints a fingerprint
/// of the full state after every step. After the kill, the reopened file's fingerprint must
/// equal the model's at some step at or after the last reported flush.
@Suite struct CrashTests {
    static let steps = 1500

    struct Model {
        var maxID: [MutationID] = []
        var fingerprint: [String] = []
    }

    func model(seed: UInt64) throws -> Model {
        let p = try ChildProcess(crashChild: ["model", "\(seed)", "\(Self.steps)"])
        var m = Model()
        for line in p.drain() {
            let f = line.split(separator: " ")
            guard f.count == 3, Int(f[0]) == m.fingerprint.count, let id = MutationID(f[1]) else { continue }
            m.maxID.append(id)
            m.fingerprint.append(String(f[2]))
        }
        #expect(p.wait() == 0)
        try #require(m.fingerprint.count == Self.steps + 1, "the model printed \(m.fingerprint.count) steps")
        return m
    }

    /// Where to kill: after the child reported `flushes` flushes, `ms` later (or after "done").
    enum KillPoint: CustomStringConvertible {
        case after(flushes: Int, ms: Int64)
        case afterDone
        var description: String {
            switch self {
            case .after(let n, let ms): "after \(n) flushes + \(ms) ms"
            case .afterDone: "after done"
            }
        }
    }

    static let killPoints: [KillPoint] = [
        .after(flushes: 0, ms: 0), .after(flushes: 1, ms: 0), .after(flushes: 7, ms: 0), .after(flushes: 40, ms: 0),
        .after(flushes: 120, ms: 0), .after(flushes: 1, ms: 1), .after(flushes: 10, ms: 2), .after(flushes: 30, ms: 5),
        .after(flushes: 60, ms: 10), .after(flushes: 100, ms: 20), .after(flushes: 0, ms: 250), .afterDone,
    ]

    /// Runs the child on a new file, kills it at `point`; returns the last step it reported
    /// flushed.
    func runAndKill(_ path: String, seed: UInt64, at point: KillPoint) throws -> Int {
        let p = try ChildProcess(crashChild: ["run", path, "\(seed)", "\(Self.steps)"])
        var lastFlushed = 0, flushes = 0, done = false
        func note(_ line: String) {
            if line == "done" { done = true }
            if line.hasPrefix("flushed "), let n = Int(line.dropFirst(8)) {
                lastFlushed = max(lastFlushed, n)
                flushes += 1
            }
        }
        switch point {
        case .after(let n, let ms):
            while flushes < n, !done, let line = p.readLine(timeoutMs: 30_000) { note(line) }
            let deadline = monotonicMs() + ms
            while case let left = deadline - monotonicMs(), left > 0, let line = p.readLine(timeoutMs: left) { note(line) }
        case .afterDone:
            while !done, let line = p.readLine(timeoutMs: 30_000) { note(line) }
        }
        p.kill(SIGKILL)
        for line in p.drain() { note(line) }   // printed before it died: flushed too
        #expect(p.wait() == 128 + SIGKILL, "the child failed before it was killed")
        return lastFlushed
    }

    @Test(arguments: [11, 23, 37] as [UInt64])
    func killedAtManyPoints(seed: UInt64) throws {
        let model = try model(seed: seed)
        for (i, point) in Self.killPoints.enumerated() {
            let dir = TempDir()
            let path = dir.file("crash-\(i).db")
            let flushed = try runAndKill(path, seed: seed, at: point)

            if fileExists(path) {
                #expect(try SQLiteStoreFile.checkIntegrity(path: path) == "ok", "\(point)")
            }
            let dump = try ChildProcess(crashChild: ["dump", path])
            let fields = dump.drain().first?.split(separator: " ") ?? []
            try #require(dump.wait() == 0 && fields.count == 2, "dump failed \(point)")
            let found = (flushed...Self.steps).first { model.fingerprint[$0] == fields[1] }
            #expect(found != nil, "seed \(seed), killed \(point): the reopened state matches no step from \(flushed) on")
            if case .afterDone = point { #expect(flushed == Self.steps) }   // the child flushes last
            guard let step = found else { continue }
            #expect(MutationID(fields[0]) == model.maxID[step])
            print("crash seed \(seed) killed \(point): flushed step \(flushed), reopened at step \(step)")

            // A new mutation gets an id above every id handed out up to that step: past the
            // gap a store skips after a crash (unless it died before it had marked the file open).
            try withStore(path) { s throws in
                let id = try s.mutate([.put(collection: "z", key: "new", value: [:])])
                let next = model.maxID[step] + 1
                #expect(id == next + SQLiteStoreFile.idGapAfterCrash || (id == next && flushed == 0), "\(point)")
            }
        }
    }
}
