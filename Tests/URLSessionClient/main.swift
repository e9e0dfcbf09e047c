// A sync client over URLSessionTransport (FoundationNetworking on Linux), for the end-to-end
// suite (Tests/e2e/test_urlsession.py): against a reference server at URL, two in-memory
// stores sync through their own URLSessionTransport. The first makes COUNT mutations and
// waits until the sync is idle; the second waits until its pulls show every record. Prints
// one JSON line: {"committed": N, "seen": N, "pushed": ..., "state": ...}; exit 1 when
// anything is missing.
//
//   optimist-urlsession-client URL [COUNT [WAIT_S]]     (WAIT_S: each wait's limit, default 30)
import Foundation
import Optimist
import OptimistURLSession

let args = CommandLine.arguments
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
