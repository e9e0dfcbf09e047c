import OptimistCore
import OptimistModel

/// Reads what a store keeps in memory from a store file into a ``StoreSnapshot``: the
/// not-yet-ended mutations, the ended statuses, views, loaded ranges and the cursor; not the
/// confirmed records (O(pending), not O(records)).
///
/// Values are parsed straight from SQLite's buffers. Anything that does not decode (bad JSON,
/// an unknown status, an ended chunk of the wrong size) means the file is damaged: `CORRUPT`,
/// never a half-loaded store (a damaged mutation row fails the store's restore, which reads
/// the mutations).
enum SnapshotLoader {
    /// Loads what `c` holds, with the live mutations to come from `mutations`, which reads
    /// them meanwhile.
    static func load(_ c: Connection, mutations: MutationLoader) throws(OptimistError) -> StoreSnapshot {
        try c.exec("BEGIN")
        defer { try? c.exec("COMMIT") }

        guard let meta = try StoredMeta.read(c) else { throw .corrupt("store file has no meta row") }
        var snapshot = StoreSnapshot(clientID: meta.clientID, nextID: MutationID(bitPattern: meta.nextMutationID),
                                     syncCursor: meta.syncCursor)
        // The live mutations are read while the store folds them (see ``MutationLoader``).
        snapshot.stream = mutations

        // Confirmed records stay in the file (``SQLiteStorage`` reads them on demand); views
        // come with their values over them.
        let views = try c.prepare("SELECT name, coll, prefix, kind, confirmed_value FROM views ORDER BY name")
        while try views.step() {
            let name = views.text(0) ?? ""
            let kind: ViewKind
            do { kind = try ViewKind(parsing: views.text(3) ?? "") } catch {
                throw .corrupt("view \(name) has an unknown kind")
            }
            snapshot.views.append(ViewDefinition(name: name, collection: Key(views.text(1) ?? ""), prefix: Key(views.text(2) ?? ""),
                                                 kind: kind, confirmedValue: views.double(4)))
        }

        // Ended statuses: 2-bit codes in chunks of ids (see ``EndedChunks``), in id order.
        let ended = try c.prepare(EndedChunks.query)
        while try ended.step() {
            do { try EndedChunks.decode(row: ended, into: &snapshot.ended) } catch { throw .corrupt(error.message) }
        }

        let loaded = try c.prepare("SELECT coll, from_key, to_key, at_ms FROM loaded ORDER BY seq")
        while try loaded.step() {
            let range = LoadedRange(from: Key(loaded.text(1) ?? ""), to: Key(loaded.text(2) ?? ""), at: loaded.int64(3))
            snapshot.loaded.append(LoadedCollectionRange(collection: Key(loaded.text(0) ?? ""), range: range))
        }
        snapshot.pullRound = try PullStageRows.round(c)
        return snapshot
    }
}
