#if canImport(Glibc)
import Glibc
#endif
import OptimistSQLite

// optimist: the command-line tool that reads store files (see Help.swift for what it does,
// FileSnapshot.swift for how it reads a store another process is writing).

func run(_ args: [String]) -> Int32 {
    let parsed: Parsed
    do {
        parsed = try parseArguments(args)
    } catch {
        Output.error("\(error.describe(file: nil))\nTry 'optimist --help'.")
        return error.exitStatus
    }
    switch parsed {
    case .version:
        Output.line(Help.version)
        return 0
    case .help(let command):
        Output.line(Help.text(command))
        return 0
    case .run(let inv):
        do {
            let snapshot = try FileSnapshot.take(inv.file)
            defer { withExtendedLifetime(snapshot) {} }
            let store = try StoreReader(snapshot)
            if store.isNewerThanKnown {
                Output.error("\(inv.file): note: layout version \(store.version) is newer than this tool knows (\(Schema.currentVersion)); showing what it understands")
            }
            switch inv.command {
            case .inspect: try Inspect.run(inv, snapshot, store)
            case .outbox: try Outbox.run(inv, store)
            case .explain: try Explain.run(inv, store)
            case .dump: try Dump.run(inv, store)
            }
            return 0
        } catch {
            Output.error(error.describe(file: inv.file))
            return error.exitStatus
        }
    }
}

let status = run(Array(CommandLine.arguments.dropFirst()))
Output.flush()
Cleanup.remove()
exit(status)
