import Foundation
import Testing
@testable import OptimistCore
@testable import OptimistModel
import OptimistTestSupport

/// Views read without the state lock: a call's values are published whole at its end, and a
/// view read does not wait for a writer.
@Suite struct ViewDirectoryTests {
    /// Inside a call's hold, after its mutation changed the view twice, readers still see the
    /// value from before the call; the publish at the call's end shows the new one.
    @Test func aCallInProgressIsNotSeen() throws {
        let s = Store()
        try s.defineView("n", collection: "c", kind: .count)
        let (during, after) = try s.state { e throws(OptimistError) -> (Double, Double) in
            _ = try e.mutate([.put(collection: "c", key: "a", value: ["v": .number(1)]),
                              .put(collection: "c", key: "b", value: ["v": .number(2)])],
                             dedupeKey: nil, policy: .rollback)
            let during = try s.viewValue("n")  // no state lock: this thread holds it
            e.publishViews()
            return (during, try s.viewValue("n"))
        }
        #expect(during == 0)
        #expect(after == 2)
        #expect(try s.viewValue("n") == 2)
    }

    /// A staged batch's view changes are published with the batch.
    @Test func aStagedBatchPublishesItsViews() throws {
        let s = Store()
        s.stagingThreshold = 2
        try s.defineView("n", collection: "c", kind: .count)
        try s.serverApply((0..<10).map { .put(collection: "c", key: Key("k\($0)"), value: ["v": .number(Double($0))]) })
        #expect(try s.viewValue("n") == 10)
        try s.serverApply((0..<4).map { .delete(collection: "c", key: Key("k\($0)")) })
        #expect(try s.viewValue("n") == 6)
    }

    /// A view read is answered while another thread holds the state lock. (An order of
    /// events, not a time limit: the holder lets go once the read returned, or after ten
    /// seconds.)
    @Test func aViewReadDoesNotWaitForTheStateLock() throws {
        let s = Store()
        try s.defineView("n", collection: "c", kind: .count)
        try s.serverApply([.put(collection: "c", key: "a", value: ["v": .number(1)])])
        let (value, whileHeld) = try readWhileStateLockHeld(s) { try s.viewValue("n") }
        #expect(value == 1)
        #expect(whileHeld, "the view read waited for the state lock")
    }

    @Test func unknownAndClosed() throws {
        let s = Store()
        #expect(throws: OptimistError.self) { try s.viewValue("nope") }
        try s.defineView("n", collection: "c", kind: .count)
        try s.close()
        #expect(throws: OptimistError.self) { try s.viewValue("n") }
    }
}
