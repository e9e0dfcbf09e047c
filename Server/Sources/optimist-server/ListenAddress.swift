/// What `--host` names, as far as the start-up check needs: whether only this machine can
/// reach it.
enum ListenAddress {
    /// 127.0.0.0/8, ::1 and `localhost`. Any other name counts as reachable from elsewhere
    /// (it is not resolved: a name that resolves to loopback today may not tomorrow).
    static func isLoopback(_ host: String) -> Bool {
        var h = host.lowercased()
        if h.hasPrefix("["), h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
