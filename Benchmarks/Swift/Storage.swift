import CSQLite
import Glibc
import Optimist

/// Storage at scale: 1M habit logs of ~100 B JSON (`--only storage`).
///
/// - bulk `serverApply` (rows/s) into a file-backed and an in-memory store;
/// - opening the 1M-record file and reading one record (time, RSS growth), in fresh processes;
/// - the RSS of an in-memory store holding the records, against their JSON size (fresh process);
/// - `get` p50 on a cached record and on records read from the file (random keys);
/// - the tap (mutate + view read) on the 1M-record file store;
/// - the same point query through SQLite alone (the floor under a miss);
/// - reopening a store file with 100k pending mutations.
///
/// Memory is the process's resident set (`/proc/self/statm`), so the figures include
/// whatever the allocator keeps; each memory figure comes from a child process of its own,
/// so nothing the parent loaded counts.
enum StorageBench {
    static let coll: Key = "logs"
    static let batch = 100_000

    static func key(_ i: Int) -> Key { Key(Workload.existing(i, n: Int.max / 2).key) }
    static func record(_ i: Int) -> Record {
        let e = Workload.existing(i, n: Int.max / 2)
        return Workload.record(day: e.day, habit: e.habit, seq: i)
    }

    /// The JSON size of records 0..<n (what the memory ratios divide by).
    static func jsonBytes(_ n: Int) -> Int {
        var total = 0
        for i in 0..<n { total += JSONWriter.string(record(i)).utf8.count }
        return total
    }

    /// Loads records 0..<n with `serverApply` in batches; returns each batch's rows/s.
    static func load(_ store: Store, n: Int, batch: Int = batch) throws -> [Double] {
        var rates = [Double]()
        var start = 0
        while start < n {
            let end = min(n, start + batch)
            let ops = (start..<end).map { Op.put(collection: coll, key: key($0), value: record($0)) }
            let t = try timeNs { try store.serverApply(ops) }
            rates.append(Double(end - start) / (Double(t) / 1e9))
            start = end
        }
        return rates
    }

    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        return s.isEmpty ? 0 : s[(s.count - 1) / 2]
    }

    static func run(dir: String, n: Int) throws {
        let path = dir + "/storage-\(n).optimist"
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
        let json = jsonBytes(n)
        note("storage: \(n) records, \(json) bytes of JSON")

        // Bulk server_apply into a file-backed store, then flush (durable) and close.
        do {
            let store = try Store.open(path: path)
            let t0 = nowNs()
            let rates = try load(store, n: n)
            try store.flush()
            let total = Double(nowNs() - t0) / 1e9
            try store.close()
            emit([("section", .str("storage")), ("kind", .str("server_apply")), ("store", .str("file")), ("n", .int(n)),
                  ("rows_per_s_median", .num(median(rates))), ("rows_per_s_with_flush", .num(Double(n) / total))])
        }
        // The same into an in-memory store.
        do {
            let store = Store()
            let rates = try load(store, n: n)
            emit([("section", .str("storage")), ("kind", .str("server_apply")), ("store", .str("memory")), ("n", .int(n)),
                  ("rows_per_s_median", .num(median(rates)))])
        }

        // Open + read one record, and the in-memory RSS: fresh processes.
        var opens = [Double](), growths = [Double]()
        for _ in 0..<5 {
            let line = try runChild(["--child-open", path, key(n / 2).string])
            let f = fields(line)
            opens.append(f["open_ms"] ?? .nan)
            growths.append(f["rss_growth_mb"] ?? .nan)
        }
        emit([("section", .str("storage")), ("kind", .str("open_read_one")), ("n", .int(n)),
              ("open_ms_median", .num(median(opens))), ("open_ms_max", .num(opens.max() ?? .nan)),
              ("rss_growth_mb_median", .num(median(growths)))])
        let mem = fields(try runChild(["--child-memory", String(n)]))
        emit([("section", .str("storage")), ("kind", .str("memory_rss")), ("n", .int(n)), ("json_mb", .num(Double(json) / 1e6)),
              ("rss_growth_mb", .num(mem["rss_growth_mb"] ?? .nan)),
              ("ratio", .num((mem["rss_growth_mb"] ?? .nan) * 1e6 / Double(json)))])

        // get: one hot record, and random records (on a big file, mostly read from disk).
        do {
            let store = try Store.open(path: path)
            let hot = key(7)
            _ = try store.get(coll, hot)
            var hits = [UInt64]()
            for _ in 0..<20_000 { hits.append(try timeNs { _ = try store.get(coll, hot) }) }
            var rng = Rand(seed: 42)
            let keys = (0..<20_000).map { _ in key(rng.below(n)) }
            var misses = [UInt64]()
            for k in keys { misses.append(try timeNs { _ = try store.get(coll, k) }) }
            emit([("section", .str("storage")), ("kind", .str("get_hit")), ("n", .int(n))] + Summary(ns: hits).fields)
            emit([("section", .str("storage")), ("kind", .str("get_random")), ("n", .int(n))] + Summary(ns: misses).fields)

            // The tap on the big file store: a put of today's log and a count view read.
            let today = Workload.day(Workload.todayIndex(n: n))
            try store.defineView("today", collection: coll, prefix: Key(today + "/"), kind: .count)
            var taps = [UInt64]()
            for seq in 0..<10_500 {
                var id: MutationID = 0
                let t = try timeNs {
                    let k = Key(Workload.key(day: today, habit: "t" + Workload.pad(seq % 8, 6)))
                    id = try store.mutate([.put(collection: coll, key: k, value: Workload.record(day: today, habit: "t", seq: seq))])
                    _ = try store.viewValue("today")
                }
                try store.rollback(id)
                if seq >= 500 { taps.append(t) }
            }
            emit([("section", .str("storage")), ("kind", .str("tap")), ("n", .int(n)), ("store", .str("file"))] + Summary(ns: taps).fields)
            try store.close()
            // The floor under a miss: the same point query through SQLite's C API alone, on
            // the same file, keys and pragmas (mmap, page cache, the exclusive locking mode that
            // spares each statement its file locks), nothing parsed or cached.
            emit([("section", .str("storage")), ("kind", .str("sqlite_point_read")), ("n", .int(n))]
                 + Summary(ns: rawPointReads(path: path, keys: keys)).fields)
        }
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
        try reopen(dir: dir)
    }

    /// Reopening a store file with 100k pending mutations: open + pendingCount + close (the
    /// durable bench's measure), and the open alone, 5 times each.
    static func reopen(dir: String) throws {
        let path = dir + "/storage-reopen.optimist"
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
        let pending = 100_000
        do {
            let s = try Store.open(path: path)
            for i in 0..<pending { try s.mutate(DurableBench.op(i, "r")) }
            try s.close()
        }
        var whole = [UInt64](), opens = [UInt64]()
        for _ in 0..<5 {
            var count = 0
            var open: UInt64 = 0
            whole.append(try timeNs {
                let t0 = nowNs()
                let s = try Store.open(path: path)
                open = nowNs() - t0
                count = try s.pendingCount()
                try s.close()
            })
            opens.append(open)
            precondition(count == pending, "reopened with \(count) pending")
        }
        emit([("section", .str("storage")), ("kind", .str("reopen")), ("pending", .int(pending)),
              ("open_only_median_us", .num(Summary(ns: opens).median))] + Summary(ns: whole).fields)
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    /// Times `SELECT value FROM records WHERE coll = ? AND key = ?` per key (reads only; the
    /// connection is read-write because a read-only one cannot hold a WAL file exclusively).
    static func rawPointReads(path: String, keys: [Key]) -> [UInt64] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { fatalError("open \(path)") }
        defer { sqlite3_close(db) }
        sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -8000; PRAGMA mmap_size = 1073741824", nil, nil, nil)
        var stmt: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT value FROM records WHERE coll = ? AND key = ?", -1, &stmt, nil)
        defer { sqlite3_finalize(stmt) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        var out = [UInt64]()
        out.reserveCapacity(keys.count)
        var bytes = 0
        for k in keys {
            out.append(timeNs {
                sqlite3_bind_text(stmt, 1, coll.string, -1, transient)  // copied: the C string is temporary
                sqlite3_bind_text(stmt, 2, k.string, -1, transient)
                if sqlite3_step(stmt) == SQLITE_ROW { bytes += Int(sqlite3_column_bytes(stmt, 0)) }
                sqlite3_reset(stmt)
            })
        }
        precondition(bytes > 0, "no record read: \(String(cString: sqlite3_errmsg(db)))")
        return out
    }

    // MARK: Child processes

    /// `--child-open PATH KEY`: opens the store file and reads one record.
    static func childOpen(_ path: String, _ key: String) throws {
        let before = rssBytes()
        let t0 = nowNs()
        let store = try Store.open(path: path)
        let value = try store.get(coll, Key(key))
        let t = nowNs() - t0
        let after = rssBytes()
        precondition(value != nil, "record \(key) not found")
        emit([("open_ms", .num(Double(t) / 1e6)), ("rss_growth_mb", .num(Double(after - before) / 1e6))])
        try store.close()
    }

    /// `--child-memory N`: an in-memory store with N records; RSS growth.
    static func childMemory(_ n: Int) throws {
        let before = rssBytes()
        let store = Store()
        // Pull-sized batches: the parsed ops of a 100k batch are themselves ~100 MB, which
        // the allocator keeps after they are freed, and would be counted as the store's.
        _ = try load(store, n: n, batch: 10_000)
        let after = rssBytes()
        let last = try store.get(coll, key(n - 1))
        precondition(last != nil)
        emit([("rss_growth_mb", .num(Double(after - before) / 1e6))])
    }

    /// The resident set, from the second field of `/proc/self/statm` (pages).
    static func rssBytes() -> Int {
        guard let f = fopen("/proc/self/statm", "r") else { return 0 }
        defer { fclose(f) }
        var line = [CChar](repeating: 0, count: 256)
        guard fgets(&line, 256, f) != nil else { return 0 }
        let parts = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: " ")
        guard parts.count >= 2, let pages = Int(parts[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Runs this executable with `args` and returns its standard output.
    static func runChild(_ args: [String]) throws -> String {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw OptimistError.io("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let argv = ([CommandLine.arguments[0]] + args).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/proc/self/exe", &actions, nil, argv, environ)
        posix_spawn_file_actions_destroy(&actions)
        close(fds[1])
        guard rc == 0 else { close(fds[0]); throw OptimistError.io("spawn failed: \(rc)") }
        var out = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let k = read(fds[0], &buf, buf.count)
            if k <= 0 { break }
            out.append(contentsOf: buf[0..<k])
        }
        close(fds[0])
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        guard status == 0 else { throw OptimistError.io("child \(args) failed (status \(status))") }
        return String(decoding: out, as: UTF8.self)
    }

    /// The numbers of a one-line JSON object of numbers (what the children print).
    static func fields(_ line: String) -> [String: Double] {
        var out = [String: Double]()
        let body = line.trimmingPrefix("{").split(separator: "}").first ?? ""
        for part in body.split(separator: ",") {
            let kv = part.split(separator: ":", maxSplits: 1)
            guard kv.count == 2 else { continue }
            out[String(kv[0].filter { $0 != "\"" })] = Double(kv[1].trimmingCharacters())
        }
        return out
    }
}

private extension Substring {
    func trimmingCharacters() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\n" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\n" { s.removeLast() }
        return s
    }
}
