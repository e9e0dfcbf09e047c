import Foundation
import Testing

/// The shared scenario corpus, run through the Swift API (the C shim and Python run the same files).
@Suite struct ScenarioTests {
    /// Tests/Scenarios, or the directory in $OPTIMIST_SCENARIOS (to run drafts).
    static let directory: URL = {
        if let dir = ProcessInfo.processInfo.environment["OPTIMIST_SCENARIOS"], !dir.isEmpty {
            return URL(fileURLWithPath: dir)
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Scenarios")
    }()

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".scn") }.sorted()
    }

    @Test func theCorpusIsThere() {
        #expect(Self.files.count >= 10)
    }

    @Test(arguments: files)
    func scenario(_ name: String) throws {
        do {
            try ScenarioRunner.run(file: Self.directory.appendingPathComponent(name))
        } catch {
            Issue.record("\(name): \(error)")
        }
    }
}
