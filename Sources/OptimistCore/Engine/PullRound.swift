import OptimistModel

/// A pull round in progress: the pages a server sent with `more: true`, staged until the page
/// that ends the round (`more: false`) so that the round is applied at once.
///
/// A page cut can show a state the server never had: if mutation M wrote records A and B and a
/// later mutation N rewrote A (moving A past the cut), the first page carries B from M without
/// A. Applied page by page, the client would hold B without A for a while; applied at the
/// round's end, it goes from one state the server had to another.
///
/// The staged changes live in the storage (``ConfirmedStorage/stagePull(_:)``): a store file
/// keeps them in its `pull_stage` table, written by its writer with the round's progress, so
/// memory holds no more than one page of them while the round goes on, and a crash mid-round
/// loses nothing: the reopened store resumes the round from ``cursor``.
package struct PullRound: Sendable, Equatable {
    /// Where the next page starts: the cursor of the last page staged. The store's own sync
    /// cursor stays the one of the last round applied until this round ends.
    package var cursor: String
    /// The round began with a `reset` reply: at its end the staged changes replace every
    /// confirmed record, not only the ones they name.
    package var reset: Bool
    /// Changes staged so far (every page's, duplicates included).
    package var staged: Int

    package init(cursor: String, reset: Bool, staged: Int) {
        self.cursor = cursor
        self.reset = reset
        self.staged = staged
    }
}
