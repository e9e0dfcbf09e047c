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

    /// The same with a thread tapping beside the staged batches: the taps run between a
    /// batch's steps, and readers and listeners still see whole batches and whole taps.
    @Test func readersSeeOnlyWholeChangesBesideTaps() throws {
        let s = Store()
        let problems = try ConsistencyRun.run(s, tapping: true)
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
