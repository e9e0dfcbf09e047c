import OptimistModel
extension Unmanaged {
    /// Runs `body` with the instance, not retained, for a caller that knows what keeps it
    /// alive for the call (and says so where it calls this): a store behind its C handle, the
    /// engine under the writers' lock. A retain and a release cost the tap's hot path on every
    /// call.
    ///
    /// `_withUnsafeGuaranteedRef` with typed throws: it rethrows untyped errors, so the typed
    /// one travels out as a `Result`. Inlinable: the C boundary calls it from another module,
    /// where an unspecialized generic call cost every C call far more than the call itself.
    @inlinable @inline(__always)
    package func borrowing<R, E: Error>(_ body: (Instance) throws(E) -> R) throws(E) -> R {
        try _withUnsafeGuaranteedRef { i -> Result<R, E> in Result { () throws(E) -> R in try body(i) } }.get()
    }
}
