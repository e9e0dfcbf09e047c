import COptimist
import OptimistSQLite

/// The help texts: what a newcomer needs to use the tool without the library's docs.
enum Help {
    static let version = "optimist \(OPTIMIST_VERSION) (store layouts 1 to \(Schema.currentVersion))"

    static let overview = """
    optimist - look inside an Optimist store file

    Usage:
      optimist inspect FILE [--json]
          What the store holds: client id, mutations by status, records per collection,
          layout version, sync cursor, file size, and whether a process has it open.
      optimist outbox FILE [--status pending|inflight|failed] [--json]
          The mutations not yet ended (the outbox), oldest first: status, attempts, when
          the next attempt is due, last error, policy, dedupe key and ops.
      optimist explain FILE COLL KEY [--json]
          Why a record shows what it shows: its confirmed value, each mutation not yet
          ended on it with the value after it, and the visible value.
      optimist dump FILE [--coll C] [--prefix P] [--visible]
          The records, one JSON object per line.
      optimist help [COMMAND]
          This text, or one command's.

    FILE is a store file, as optimist_open() in C or optimist.Store(path) in Python
    creates it. The tool only reads. The store may be open in an app at the same time:
    the tool then copies the file (and its -wal file) into a scratch directory under
    $TMPDIR without taking any lock, so the app is never blocked, and reads the copy.
    The copy is deleted when the tool ends; it takes time and room in proportion to the
    store's size.

    Words:
      confirmed  what the server (the authority) acknowledged
      pending    a mutation applied on this device and not yet sent, or waiting to be
                 sent again after a failed attempt
      inflight   handed to the sender; its answer is not in yet
      failed     failed for good, kept visible (policy "keep") until the app retries or
                 rolls it back
      visible    the confirmed value with every mutation not yet ended applied on top,
                 in order: what the app shows

    Options:
      --json       canonical JSON instead of tables (the shapes optimist_mutations and
                   optimist_explain give in C, store.mutations() and store.explain() in
                   Python)
      -h, --help   this text; after a command, that command's
      --version    the tool's version

    Exit status: 0 done; 1 the file is missing, unreadable, not an Optimist store, or
    damaged (the message on stderr says which); 2 a bad command line.
    """

    static func text(_ command: Invocation.Command?) -> String {
        switch command {
        case nil: overview
        case .inspect: """
            optimist inspect FILE [--json]

            Prints what the store file holds:
              file         its size, and that of its write-ahead log (-wal) if any
              layout       the file's layout version (PRAGMA user_version)
              integrity    SQLite's quick check of the file's structure (a file that
                           fails it is reported as damaged, exit status 1)
              client id    the store's id, sent to the server with every mutation id
              in use       whether a process has the store open now (and its pid), or
                           whether its last session ended without closing (a crash)
              mutations    the mutations not yet ended, by status (see: optimist outbox)
              ended        how many the store remembers as committed / rolled back
              next id      the id the next mutation gets
              records      confirmed records, per collection
              sync cursor  where the next pull of the sync starts (none: never pulled)
              loaded       key ranges marked loaded (freshness)
              views        views stored in the file, if its layout stores any

            With --json: one JSON object with the same facts.
            """
        case .outbox: """
            optimist outbox FILE [--status pending|inflight|failed] [--json]

            Lists the mutations not yet ended, oldest first (id order), as the file holds
            them: what the app has applied and the server has not settled.
              STATUS        pending, inflight or failed (see: optimist --help). The file
                            may say inflight for a mutation whose answer never came (the
                            app crashed, or it is sending now); the library sends it again
                            when it reopens the store.
              ATTEMPTS      sends so far
              NEXT ATTEMPT  not sent before this time (ms, the app's clock); "now" when
                            nothing holds it back
              POLICY        what a final failure does: rollback, or keep (stay visible
                            as failed)
              DEDUPE        the dedupe key that guards it against a double tap, if any
              LAST ERROR    the reason given with its last failure
              OPS           its ops (long ones cut short here; --json has them whole)

            --status shows only the mutations with that status. With --json: a JSON
            array of objects with id, status, ops, attempts, last_error, next_attempt_ms,
            created_ms (always null: no creation time is stored), policy, dedupe_key and
            retry.
            """
        case .explain: """
            optimist explain FILE COLL KEY [--json]

            Shows why record KEY of collection COLL looks the way it does: its confirmed
            value (what the server acknowledged, as stored), then every mutation not yet
            ended that touches it, oldest first, with its ops on this record and the
            record's value after it, and last the visible value: what the app shows.
            The values are folded from the file as the library folds them: an op that
            cannot apply on the value below it (an incr of a field that became text) is
            skipped and marked so.

            With --json: {"confirmed": ..., "layers": [{"id", "ops", "status",
            "value"}], "visible": ...}.
            """
        case .dump: """
            optimist dump FILE [--coll C] [--prefix P] [--visible]

            Prints the records as JSON lines, {"coll":C,"key":K,"value":{...}}, sorted by
            collection then key (bytewise). By default the confirmed records, as stored;
            with --visible, what the app shows instead (every mutation not yet ended
            applied on top; records that only exist through them included, deleted ones
            left out), each line with the record's "status": confirmed, pending or failed.
              --coll C     only collection C
              --prefix P   only keys that start with P
            The output is JSON lines with or without --json.
            """
        }
    }
}
