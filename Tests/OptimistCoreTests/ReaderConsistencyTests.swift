import Testing
@testable import OptimistCore
@testable import OptimistModel
import OptimistTestSupport

/// Readers never see a state that did not exist (see ``ConsistencyRun``): an in-memory store
/// here, a store file in the SQLite tests.
@Suite struct ReaderConsistencyTests {
    @Test func readersSeeOnlyWholeChanges() throws {
        let s = Store()
        let problems = try ConsistencyRun.run(s)
        #expect(problems.isEmpty, "\(problems)")
    }

    /// The same with every server change made under the state lock whole (nothing staged):
    /// the check holds either way; staging only shortens the wait.
    @Test func readersSeeOnlyWholeChangesUnstaged() throws {
        let s = Store()
        s.stagingThreshold = .max
        let problems = try ConsistencyRun.run(s)
        #expect(problems.isEmpty, "\(problems)")
    }
}
