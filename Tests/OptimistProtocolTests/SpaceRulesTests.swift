import OptimistModel
import OptimistProtocol
import Testing

/// Which collections live in which space, and who may write what there.
@Suite struct SpaceRulesTests {
    @Test func spaceOfACollection() {
        #expect(SpaceName.of(collection: "room/messages") == "room")
        #expect(SpaceName.local(collection: "room/messages") == "messages")
        #expect(SpaceName.of(collection: "room/a/b") == "room")
        #expect(SpaceName.local(collection: "room/a/b") == "a/b")
        #expect(SpaceName.of(collection: "messages") == nil)
        #expect(SpaceName.of(collection: "/messages") == nil)
        #expect(SpaceName.of(collection: "é/x") == "é")
        #expect(SpaceName.membersCollection(of: "room") == "room/$members")
        #expect(SpaceName.isValid("room") && !SpaceName.isValid("") && !SpaceName.isValid("a/b"))
    }

    @Test func reservedNames() {
        #expect(SpaceRules.reservedName(in: "$sys/x")?.hasPrefix("forbidden") == true)
        #expect(SpaceRules.reservedName(in: "room/$other")?.hasPrefix("forbidden") == true)
        #expect(SpaceRules.reservedName(in: "room/$members") == nil)
        #expect(SpaceRules.reservedName(in: "$private") == nil)
        #expect(SpaceRules.reservedName(in: "room/x$") == nil)
    }

    @Test func roleOfAMembersRecord() {
        #expect(SpaceRules.Role(nil) == .none)
        #expect(SpaceRules.Role(["role": "writer"]) == .role(.writer))
        #expect(SpaceRules.Role(["role": "writer", "name": "Bob"]) == .role(.writer))
        #expect(SpaceRules.Role(["role": "admin"]) == .invalid)
        #expect(SpaceRules.Role(["name": "Bob"]) == .invalid)
        #expect(SpaceRules.Role(["role": 1]) == .invalid)
    }

    private func member(_ key: String, _ before: SpaceRules.Role, _ after: SpaceRules.Role) -> SpaceRules.Write {
        SpaceRules.Write(membersKey: key, before: before, after: after)
    }

    private let data = SpaceRules.Write(membersKey: nil, before: .none, after: .none)

    private func refused(_ d: SpaceRules.Decision) -> Bool {
        if case .refused(let why) = d { return why.hasPrefix("forbidden") }
        return false
    }

    @Test func creation() {
        let create = [member("ann", .none, .role(.owner)), data]
        #expect(SpaceRules.check(space: "s", user: "ann", created: false, role: nil, owners: 0, writes: create) == .allowed(owners: 1))
        #expect(refused(SpaceRules.check(space: "s", user: "ann", created: false, role: nil, owners: 0, writes: [data])))
        #expect(refused(SpaceRules.check(space: "s", user: "ann", created: false, role: nil, owners: 0,
                                         writes: [member("bob", .none, .role(.owner))])))
        #expect(refused(SpaceRules.check(space: "s", user: "ann", created: false, role: nil, owners: 0,
                                         writes: [member("ann", .none, .role(.writer))])))
        // Once created, the same mutation from a non-member is a claim.
        #expect(refused(SpaceRules.check(space: "s", user: "ann", created: true, role: nil, owners: 1, writes: create)))
    }

    @Test func whatEachRoleMayWrite() {
        let addReader = [member("cat", .none, .role(.reader))]
        #expect(SpaceRules.check(space: "s", user: "ann", created: true, role: .owner, owners: 1, writes: addReader) == .allowed(owners: 1))
        #expect(refused(SpaceRules.check(space: "s", user: "bob", created: true, role: .writer, owners: 1, writes: addReader)))
        #expect(SpaceRules.check(space: "s", user: "bob", created: true, role: .writer, owners: 1, writes: [data]) == .allowed(owners: 1))
        #expect(refused(SpaceRules.check(space: "s", user: "cat", created: true, role: .reader, owners: 1, writes: [data])))
        // Anyone leaves; nobody promotes themselves.
        for role in [SpaceRole.writer, .reader] {
            #expect(SpaceRules.check(space: "s", user: "x", created: true, role: role, owners: 1,
                                     writes: [member("x", .role(role), .none)]) == .allowed(owners: 1))
            #expect(refused(SpaceRules.check(space: "s", user: "x", created: true, role: role, owners: 1,
                                             writes: [member("x", .role(role), .role(.owner))])))
            #expect(refused(SpaceRules.check(space: "s", user: "x", created: true, role: role, owners: 1,
                                             writes: [member("y", .role(.reader), .none)])))
        }
    }

    @Test func aSpaceKeepsAnOwnerAndValidRoles() {
        #expect(refused(SpaceRules.check(space: "s", user: "ann", created: true, role: .owner, owners: 1,
                                         writes: [member("ann", .role(.owner), .none)])))
        #expect(refused(SpaceRules.check(space: "s", user: "ann", created: true, role: .owner, owners: 1,
                                         writes: [member("ann", .role(.owner), .role(.reader))])))
        #expect(SpaceRules.check(space: "s", user: "ann", created: true, role: .owner, owners: 2,
                                 writes: [member("ann", .role(.owner), .none)]) == .allowed(owners: 1))
        #expect(SpaceRules.check(space: "s", user: "ann", created: true, role: .owner, owners: 1,
                                 writes: [member("bob", .none, .role(.owner)), member("ann", .role(.owner), .none)])
                == .allowed(owners: 1))
        #expect(refused(SpaceRules.check(space: "s", user: "ann", created: true, role: .owner, owners: 1,
                                         writes: [member("bob", .none, .invalid)])))
    }
}
