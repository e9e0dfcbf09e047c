import OptimistModel

/// What the command line asks for.
struct Invocation {
    enum Command: String, CaseIterable {
        case inspect, outbox, explain, dump
    }

    var command: Command
    var file: String
    /// explain: the collection and the key.
    var collection: String?
    var key: String?
    var json = false
    /// outbox --status.
    var status: MutationStatus?
    /// dump --prefix, --visible (and --coll, in `collection`).
    var prefix = ""
    var visible = false
}

enum Parsed {
    case help(Invocation.Command?)
    case version
    case run(Invocation)
}

/// Parses the arguments (without the program name). Options may come before or after the
/// operands; `--name=value` and `--name value` both work; `--` ends the options.
func parseArguments(_ args: [String]) throws(CLIError) -> Parsed {
    var operands = [String](), options = [(name: String, value: String?)]()
    var i = 0, optionsEnded = false
    while i < args.count {
        let a = args[i]
        i += 1
        if optionsEnded || !a.hasPrefix("-") || a == "-" { operands.append(a); continue }
        if a == "--" { optionsEnded = true; continue }
        if let eq = a.firstIndex(of: "="), a.hasPrefix("--") {
            options.append((String(a[..<eq]), String(a[a.index(after: eq)...])))
        } else if ["--coll", "--prefix", "--status"].contains(a) {
            guard i < args.count else { throw .usage("\(a) needs a value") }
            options.append((a, args[i]))
            i += 1
        } else {
            options.append((a, nil))
        }
    }
    if options.contains(where: { $0.name == "--version" }) { return .version }
    let wantsHelp = options.contains { $0.name == "-h" || $0.name == "--help" }
    guard let first = operands.first else {
        if wantsHelp { return .help(nil) }
        throw .usage("no command given")
    }
    if first == "help" {
        guard operands.count <= 2 else { throw .usage("help takes at most one command name") }
        guard operands.count == 2 else { return .help(nil) }
        guard let c = Invocation.Command(rawValue: operands[1]) else { throw .usage("no command \"\(operands[1])\"") }
        return .help(c)
    }
    guard let command = Invocation.Command(rawValue: first) else { throw .usage("no command \"\(first)\"") }
    if wantsHelp { return .help(command) }

    let rest = Array(operands.dropFirst())
    let want = command == .explain ? 3 : 1
    guard rest.count == want else {
        throw .usage(command == .explain ? "explain needs FILE COLL KEY" : "\(command.rawValue) needs one FILE")
    }
    var inv = Invocation(command: command, file: rest[0])
    if command == .explain {
        inv.collection = rest[1]
        inv.key = rest[2]
    }
    for (name, value) in options {
        switch (name, command) {
        case ("--json", _) where value == nil:
            inv.json = true
        case ("--status", .outbox):
            guard let value, let s = MutationStatus.allCases.first(where: { $0.description == value }), !s.isEnded else {
                throw .usage("--status must be pending, inflight or failed (ended mutations are not kept)")
            }
            inv.status = s
        case ("--coll", .dump):
            inv.collection = value
        case ("--prefix", .dump):
            inv.prefix = value ?? ""
        case ("--visible", .dump) where value == nil:
            inv.visible = true
        default:
            throw .usage("\(command.rawValue) has no option \(name)")
        }
    }
    return .run(inv)
}
