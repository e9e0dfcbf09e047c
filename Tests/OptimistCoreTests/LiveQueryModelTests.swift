import Testing
@testable import OptimistCore
@testable import OptimistModel
import OptimistTestSupport

/// The live queries' model-based test on an in-memory store (``LiveQueryRun``: after every
/// random step, each query's rows and a mirror built from its deltas equal a brute-force
/// evaluation of its spec).
@Suite struct LiveQueryModelTests {
    @Test(arguments: 0..<300)
    func randomSequencesKeepEveryQueryEqualToItsResult(seed: Int) throws {
        let problems = try LiveQueryRun.run(seed: seed, steps: 60, open: { Store() })
        #expect(problems.isEmpty, "\(problems)")
    }

    /// The same with every server change staged (built outside the state lock, published in
    /// one step): a staged batch reaches the queries as one call.
    @Test(arguments: 0..<100)
    func withEveryServerChangeStaged(seed: Int) throws {
        let problems = try LiveQueryRun.run(seed: seed, steps: 60, open: {
            let s = Store()
            s.stagingThreshold = 1
            return s
        })
        #expect(problems.isEmpty, "\(problems)")
    }

    /// With indexes on three fields and queries opened all along the run, so that their first
    /// evaluation reads through an index over every state the run reaches (pending, failed,
    /// staged), half of the runs with every server change staged.
    @Test(arguments: 0..<200)
    func queriesOpenedThroughIndexes(seed: Int) throws {
        let problems = try LiveQueryRun.run(seed: seed, steps: 60, indexed: true, open: {
            let s = Store()
            if seed % 2 == 1 { s.stagingThreshold = 1 }
            return s
        })
        #expect(problems.isEmpty, "\(problems)")
    }
}
