import Testing
import OptimistSync

/// `Retry-After` as every transport reads it (libcurl's header lines, URLSession's values).
@Suite struct RetryAfterTests {
    @Test func delaySecondsAreReadAndCapped() {
        #expect(SyncReply.retryAfterMs(headerValue: " 3\r\n".utf8) == 3_000)
        #expect(SyncReply.retryAfterMs(headerValue: "120".utf8) == 120_000)
        #expect(SyncReply.retryAfterMs(headerValue: "\t7 ".utf8) == 7_000)
        #expect(SyncReply.retryAfterMs(headerValue: "999999999".utf8) == 86_400_000)   // a day at most
    }

    @Test func anythingElseIsNoHint() {
        #expect(SyncReply.retryAfterMs(headerValue: "Wed, 21 Oct 2026 07:28:00 GMT".utf8) == nil)
        #expect(SyncReply.retryAfterMs(headerValue: "".utf8) == nil)
        #expect(SyncReply.retryAfterMs(headerValue: "-1".utf8) == nil)
        #expect(SyncReply.retryAfterMs(headerValue: "1000000000".utf8) == nil)         // over 9 digits
        #expect(SyncReply.retryAfterMs(headerValue: "1.5".utf8) == nil)
    }
}
