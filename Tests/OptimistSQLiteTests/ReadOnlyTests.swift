#if canImport(Glibc)
import Glibc
#endif
import Testing
import OptimistCore
import OptimistOpen
import OptimistSQLite
import OptimistModel

/// A second opener of a store file that is held open (here by the same process; a second
/// process is the Python suite's test_read_only.py): a read-only open never gets BUSY, sees
/// what was flushed when it opened (pending mutations included, as the visible state), refuses
/// every change, never makes the writer's flushes fail, and removes its copy at the close.
// Serialized: the second test points TMPDIR (process-wide) at a directory of its own to see
// the copy come and go, and the first one's copy must not land there.
@Suite(.serialized) struct ReadOnlyTests {
    @Test func aReaderSeesWhatWasFlushedAndTheWriterGoesOn() throws {
        let dir = TempDir()
        let path = dir.file("app.db")
        let writer = try Store.open(path: path)
        defer { try? writer.close() }
        try writer.serverApply([.put(collection: "logs", key: "d1", value: ["done": true])])
        let pending = try writer.mutate([.put(collection: "logs", key: "d2", value: ["done": false])])
        try writer.defineView("done", collection: "logs", kind: .count)
        try writer.flush()
        // A plain second open is turned away; a read-only one is not.
        #expect(throws: OptimistError.self) { try Store.open(path: path) }
        let reader = try Store.open(path: path, readOnly: true)
        #expect(reader.isReadOnly && !writer.isReadOnly)
        #expect(try reader.get("logs", "d1") == ["done": true])
        #expect(try reader.get("logs", "d2") == ["done": false])          // pending, visible
        #expect(try reader.confirmed("logs", "d2") == nil)
        #expect(try reader.status(pending) == .pending)
        #expect(try reader.viewValue("done") == 2)
        #expect(try reader.scan("logs").map(\.key) == ["d1", "d2"])

        // Every change refused, nothing changed.
        #expect(throws: Store.readOnlyRefusal) { try reader.mutate([.put(collection: "logs", key: "x", value: [:])]) }
        #expect(throws: Store.readOnlyRefusal) { try reader.commit(pending) }
        #expect(throws: Store.readOnlyRefusal) { try reader.serverApply([.delete(collection: "logs", key: "d1")]) }
        #expect(throws: Store.readOnlyRefusal) { try reader.outboxNext(now: 0) }
        #expect(throws: Store.readOnlyRefusal) { try reader.defineView("n", collection: "logs", kind: .count) }
        #expect(try reader.get("logs", "d1") == ["done": true])

        // The writer goes on and flushes; the reader keeps what it opened on.
        try writer.commit(pending)
        try writer.mutate([.put(collection: "logs", key: "d3", value: [:])])
        try writer.flush()
        #expect(try reader.status(pending) == .pending)
        #expect(try reader.get("logs", "d3") == nil)
        try reader.close()

        // Open again: the later changes.
        let again = try Store.open(path: path, readOnly: true)
        #expect(try again.status(pending) == .committed)
        #expect(try again.get("logs", "d3") == [:])
        try again.close()
    }

    @Test func theCopyGoesAtTheCloseAndBadOpensSayWhy() throws {
        let dir = TempDir()
        let path = dir.file("app.db")
        try withStore(path) { s in try s.mutate([.put(collection: "c", key: "k", value: [:])]) }
        let scratch = TempDir()
        setenv("TMPDIR", scratch.path, 1)
        defer { unsetenv("TMPDIR") }
        let reader = try Store.open(path: path, readOnly: true)
        #expect(entries(scratch.path).count == 1)       // the copy's directory
        try reader.close()
        #expect(entries(scratch.path).isEmpty)

        #expect(throws: OptimistError.self) { try Store.open(path: nil, readOnly: true) }
        #expect(throws: OptimistError.self) { try Store.open(path: path, localOnly: true, readOnly: true) }
        do { _ = try Store.open(path: dir.file("missing.db"), readOnly: true); Issue.record("opened a missing file") } catch {
            #expect(error.code == 7 && error.message.contains("missing.db"), "\(error)")
        }
        let junk = dir.file("junk.db")
        writeFile(junk, Array("not a database at all, just some text that is long enough".utf8))
        do { _ = try Store.open(path: junk, readOnly: true); Issue.record("opened junk") } catch {
            #expect(error.code == 8 && error.message.contains("junk.db") && !error.message.contains("optimist-reader"), "\(error)")
        }
        #expect(entries(scratch.path).isEmpty)           // nothing left behind by the failures
    }

    private func entries(_ dir: String) -> [String] {
        guard let d = opendir(dir) else { return [] }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }
}
