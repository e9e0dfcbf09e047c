import Foundation
import Testing

/// The shared scenario corpus, run through the Swift API (the C shim and Python run the same files).
@Suite struct ScenarioTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Scenarios")

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
