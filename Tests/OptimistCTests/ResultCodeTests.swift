import COptimist
import OptimistC
import OptimistModel
import Testing

/// The one table between Swift errors and C result codes (Sources/OptimistC/ResultCode.swift):
/// every case has the header's number, and no two cases share one.
@Suite struct ResultCodeTests {
    static let cases: [(OptimistError, Int32)] = [
        (.internal("x"), OPTIMIST_ERROR), (.misuse("x"), OPTIMIST_MISUSE), (.notFound("x"), OPTIMIST_NOTFOUND),
        (.state("x"), OPTIMIST_STATE), (.invalid("x"), OPTIMIST_INVALID), (.duplicate(existing: 7), OPTIMIST_DUPLICATE),
        (.io("x"), OPTIMIST_IO), (.corrupt("x"), OPTIMIST_CORRUPT), (.busy("x"), OPTIMIST_BUSY),
    ]

    @Test func everyCaseHasTheHeadersNumber() {
        for (error, number) in Self.cases { #expect(error.code == number, "\(error)") }
    }

    @Test func noTwoCasesShareANumberAndNoneIsOK() {
        let codes = Self.cases.map { $0.0.code }
        #expect(Set(codes).count == codes.count)
        #expect(!codes.contains(OPTIMIST_OK))
    }
}
