import Testing
@testable import OptimistModel
@testable import OptimistCore
import OptimistTestSupport

/// The model-based test: random sequences of calls, checked against ``NaiveModel`` after every
/// step (``ModelRun``), on an in-memory store with the default cache and with a one-byte
/// cache, which holds nothing between calls: every step evicts everything, so every read of
/// a confirmed record parses it again from the compact storage.
@Suite struct ModelTests {
    @Test(arguments: 0..<1000)
    func randomSequencesMatchTheNaiveModel(seed: Int) throws {
        let problems = try ModelRun.run(seed: seed, steps: 80, open: { Store() })
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test(arguments: 0..<300)
    func withATinyCacheEveryStepEvicts(seed: Int) throws {
        var evictedEveryStep = true
        let problems = try ModelRun.run(seed: seed, steps: 80, open: { try Store(cacheBytes: 1) }, afterStep: { s in
            if s.cacheUsage.entries != 0 { evictedEveryStep = false }
            return []
        })
        #expect(problems.isEmpty, "\(problems)")
        #expect(evictedEveryStep)
    }

    /// Every server change staged (see ``Store``'s locking): built outside the state lock,
    /// published as a layer, moved into the storage in chunks. The same sequences must give
    /// the same states, with the one-byte cache too.
    @Test(arguments: 0..<300)
    func withEveryServerChangeStaged(seed: Int) throws {
        let problems = try ModelRun.run(seed: seed, steps: 80, open: {
            let s = try Store(cacheBytes: seed % 2 == 0 ? defaultCacheBytes : 1)
            s.stagingThreshold = 1
            return s
        })
        #expect(problems.isEmpty, "\(problems)")
    }
}
