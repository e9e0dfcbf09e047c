// A sync client over URLSessionTransport (FoundationNetworking on Linux), for the end-to-end
// suite (Tests/e2e/test_urlsession.py): against a reference server at URL, two in-memory
// stores sync through their own URLSessionTransport. The first makes COUNT mutations and
// waits until the sync is idle; the second waits until its pulls show every record. Prints
// one JSON line: {"committed": N, "seen": N, "pushed": ..., "state": ...}; exit 1 when
// anything is missing.
//
//   optimist-urlsession-client URL [COUNT [WAIT_S]]     (WAIT_S: each wait's limit, default 30)
//
// With `events`, the event stream through URLSessionTransport instead: one store syncs with
// URL pulling every hour; once its stream is live it prints {"live": true} and waits for the
// record notes/poked (which the server, told by that line, writes and pokes about: only the
// stream can bring it within the wait), then closes the store and prints one JSON line:
// {"live": ..., "poked": ..., "stream": <the status's stream after the close>}; exit 1 when
// anything is missing.
//
//   optimist-urlsession-client events URL [WAIT_S]
import Foundation
import Optimist
import OptimistURLSession

let args = CommandLine.arguments
if args.count >= 3 && args[1] == "events" {
    exit(eventsMode(url: args[2], waitS: args.count > 3 ? Int(args[3]) ?? 30 : 30))
}
guard args.count >= 2 else {
    FileHandle.standardError.write(Data("usage: optimist-urlsession-client URL [COUNT]\n".utf8))
    exit(2)
}
let url = args[1]
let count = args.count > 2 ? Int(args[2]) ?? 50 : 50
let waitS = args.count > 3 ? Int(args[3]) ?? 30 : 30

func started(_ store: Store) throws -> Store {
    var o = SyncOptions(url: url)
    o.transport = URLSessionTransport()
    o.pullIntervalMs = 100
    try store.startSync(o)
    return store
}

do {
    let writer = try started(Store())
    let reader = try started(Store())
    var ids: [MutationID] = []
    for i in 0..<count {
        ids.append(try writer.mutate([.put(collection: "notes", key: Key("n\(i)"), value: ["i": .number(Double(i))])]))
    }
    let idle = try writer.waitForSyncIdle(timeoutMs: Int64(waitS) * 1000)
    let committed = try ids.filter { try writer.status($0) == .committed }.count
    var seen = 0
    let deadline = Date().addingTimeInterval(Double(waitS))
    while Date() < deadline {
        seen = try reader.scan("notes").count
        if seen == count { break }
        usleep(20_000)
    }
    let status = writer.syncStatus
    print("{\"idle\": \(idle), \"committed\": \(committed), \"seen\": \(seen), \"state\": \"\(status.state)\"}")
    try writer.close()
    try reader.close()
    exit(idle && committed == count && seen == count ? 0 : 1)
} catch {
    print("{\"error\": \"\(error)\"}")
    exit(1)
}

/// Polls `condition` every 10 ms until it holds or `seconds` pass.
func within(_ seconds: Int, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(Double(seconds))
    while Date() < deadline {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}

func eventsMode(url: String, waitS: Int) -> Int32 {
    do {
        let store = Store()
        var o = SyncOptions(url: url)
        o.transport = URLSessionTransport()
        o.pullIntervalMs = 3_600_000
        try store.startSync(o)
        let live = within(waitS) { store.syncStatus.stream == .live }
        // Through FileHandle: stdout is a pipe, and print's buffer would hold the line back.
        FileHandle.standardOutput.write(Data("{\"live\": \(live)}\n".utf8))
        let poked = try live && within(waitS) { try store.get("notes", "poked") != nil }
        try store.close()
        print("{\"live\": \(live), \"poked\": \(poked), \"stream\": \"\(store.syncStatus.stream)\"}")
        return live && poked ? 0 : 1
    } catch {
        print("{\"error\": \"\(error)\"}")
        return 1
    }
}
