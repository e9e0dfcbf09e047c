import CSQLite
import OptimistCore
import OptimistModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ordered secondary indexes in a store file.
///
/// An index is a row of `indexes` (id, collection, field path as a JSON array of names) and
/// its entries, rows of `index_entries` (id, sort key, record key): the sort key is
/// ``IndexKey``'s bytes for the record's value at the path, and SQLite's BLOB order is the
/// queries' order. The entries are kept up to date by three triggers on `records` that the
/// definition creates (insert, update, delete, for that collection only), so every path that
/// writes records (a batch, a staged round applied in the file, a reset) keeps them without
/// knowing of them, and a collection without an index pays nothing. The triggers compute the
/// key with the SQL function `optimist_index_key(value, field)`, which every connection of
/// this library registers (``FileIndexes/register(_:)``).
enum FileIndexes {
    static let functionName = "optimist_index_key"

    /// Registers `optimist_index_key` on a connection and turns on recursive triggers (so an
    /// `INSERT OR REPLACE` that replaces a record fires the delete trigger for the old row).
    static func register(_ db: OpaquePointer) {
        sqlite3_create_function_v2(db, functionName, 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { ctx, argc, argv in
            guard let ctx, argc == 2, let argv else { return }
            let path = FileIndexes.fieldPath(ctx, argv[1])
            let value = argv[0]
            let n = Int(sqlite3_value_bytes(value))
            let p = sqlite3_value_text(value)
            // A record that does not parse (a damaged file) sorts as "missing": a read of it
            // reports the damage; failing here would stop every write after it.
            var key: [UInt8]
            if let p, let path, let record = try? JSONParser.parseObject(UnsafeBufferPointer(start: p, count: n)) {
                key = IndexKey.encode(path.value(in: record, key: ""))
            } else {
                key = IndexKey.encode(nil)
            }
            key.withUnsafeBytes { b in
                sqlite3_result_blob(ctx, b.baseAddress, Int32(b.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
        }, nil, nil, nil)
        sqlite3_exec(db, "PRAGMA recursive_triggers = ON", nil, nil, nil)
    }

    /// A parsed field path, kept by SQLite beside the trigger's constant argument (auxdata), so
    /// it is parsed once per statement, not once per record.
    private final class PathBox {
        let path: FieldPath
        init(_ path: FieldPath) { self.path = path }
    }

    fileprivate static func fieldPath(_ ctx: OpaquePointer, _ arg: OpaquePointer?) -> FieldPath? {
        if let aux = sqlite3_get_auxdata(ctx, 1) {
            return Unmanaged<PathBox>.fromOpaque(aux).takeUnretainedValue().path
        }
        guard let arg, let p = sqlite3_value_text(arg) else { return nil }
        let text = String(cString: p)
        guard let path = decode(text) else { return nil }
        let box = Unmanaged.passRetained(PathBox(path)).toOpaque()
        sqlite3_set_auxdata(ctx, 1, box) { Unmanaged<PathBox>.fromOpaque($0!).release() }
        return path
    }

    /// A field path as the file writes it: a JSON array of its names.
    static func encode(_ field: FieldPath) -> String {
        JSONWriter.string(.array(field.names.map { .string($0.string) }))
    }

    static func decode(_ text: String) -> FieldPath? {
        guard let json = try? JSONParser.parse(text), case .array(let items) = json, !items.isEmpty else { return nil }
        var names = [Key]()
        for item in items {
            guard case .string(let s) = item else { return nil }
            names.append(Key(s))
        }
        return FieldPath(names: names)
    }

    /// The text as an SQL literal that keeps every byte (a NUL included): a hex BLOB cast to
    /// TEXT.
    static func literal(_ s: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out = Array("CAST(X'".utf8)
        for b in s.utf8 {
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 15)])
        }
        out += Array("' AS TEXT)".utf8)
        return String(decoding: out, as: UTF8.self)
    }

    /// Every index of the file, by collection, in the order they were defined.
    static func load(_ c: Connection) throws(OptimistError) -> [Key: [(field: FieldPath, id: Int64)]] {
        var out = [Key: [(field: FieldPath, id: Int64)]]()
        let s = try c.serially { () throws(OptimistError) in try c.prepare("SELECT id, coll, field FROM indexes ORDER BY id") }
        try c.serially { () throws(OptimistError) in
            defer { s.reset() }
            while try s.step() {
                let id = s.int64(0)
                guard let coll = s.text(1), let text = s.text(2), let field = decode(text) else {
                    throw OptimistError.corrupt("index \(id) in the store file is damaged")
                }
                out[Key(coll), default: []].append((field, id))
            }
        }
        return out
    }

    /// Defines the index in the file, in one transaction on the writer's connection: its row,
    /// its entries for the records the file has, its triggers. Returns its id.
    ///
    /// On the writer's connection, between two of the writer's batches: a second connection
    /// writing the file would make the writer's next `BEGIN IMMEDIATE` find it locked (store
    /// files are held exclusively). The connection's gate is taken when it is in no
    /// transaction, and held for the whole definition, so the writer waits for it; the store's
    /// callers wait too (the definition runs under the store's locks), so the writer's batch
    /// in progress, if any, ends soon. The writer's statements see the new triggers from their
    /// next run (SQLite prepares them again after a schema change).
    static func define(on c: Connection, _ collection: Key, _ field: FieldPath) throws(OptimistError) -> Int64 {
        while true {
            let id = try c.serially { () throws(OptimistError) -> Int64? in
                guard sqlite3_get_autocommit(c.db) != 0 else { return nil }  // a batch in progress
                return try defineLocked(c, collection, field)
            }
            if let id { return id }
            usleep(500)
        }
    }

    private static func defineLocked(_ c: Connection, _ collection: Key, _ field: FieldPath) throws(OptimistError) -> Int64 {
        try c.exec("BEGIN IMMEDIATE")
        do throws(OptimistError) {
            let find = try c.prepare("SELECT id FROM indexes WHERE coll = ? AND field = ?")
            find.bind(1, collection)
            find.bind(2, encode(field))
            if try find.step() {
                let id = find.int64(0)
                find.reset()
                try c.exec("COMMIT")
                return id
            }
            find.reset()
            let add = try c.prepare("INSERT INTO indexes(coll, field) VALUES (?, ?)")
            add.bind(1, collection)
            add.bind(2, encode(field))
            try add.run()
            let id = try c.scalarInt("SELECT last_insert_rowid()")
            let coll = literal(collection.string), f = literal(encode(field))
            let newKey = "\(functionName)(NEW.value, \(f))", oldKey = "\(functionName)(OLD.value, \(f))"
            try c.exec("""
                INSERT INTO index_entries(idx, sort, key) SELECT \(id), \(functionName)(value, \(f)), key FROM records WHERE coll = \(coll);
                CREATE TRIGGER index_\(id)_insert AFTER INSERT ON records WHEN NEW.coll = \(coll) BEGIN
                    INSERT OR REPLACE INTO index_entries(idx, sort, key) VALUES (\(id), \(newKey), NEW.key);
                END;
                CREATE TRIGGER index_\(id)_delete AFTER DELETE ON records WHEN OLD.coll = \(coll) BEGIN
                    DELETE FROM index_entries WHERE idx = \(id) AND sort = \(oldKey) AND key = OLD.key;
                END;
                CREATE TRIGGER index_\(id)_update AFTER UPDATE ON records WHEN OLD.coll = \(coll) OR NEW.coll = \(coll) BEGIN
                    DELETE FROM index_entries WHERE OLD.coll = \(coll) AND idx = \(id) AND sort = \(oldKey) AND key = OLD.key;
                    INSERT OR REPLACE INTO index_entries(idx, sort, key) SELECT \(id), \(newKey), NEW.key WHERE NEW.coll = \(coll);
                END;
                COMMIT
                """)
            return id
        } catch {
            try? c.exec("ROLLBACK")
            throw error
        }
    }
}
