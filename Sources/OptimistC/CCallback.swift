/// A C function a caller gave the library and the context pointer it gave with it, handed back
/// to the function untouched at each call. The library only passes the context on, so sending
/// it to another thread (the one that made a change, the sync's) is the caller's contract, as
/// the header says for each callback. Each kind of callback adds its `deliver` in its own file.
final class CCallback<Fn>: @unchecked Sendable {
    let fn: Fn
    let ctx: UnsafeMutableRawPointer?

    init(_ fn: Fn, ctx: UnsafeMutableRawPointer?) {
        self.fn = fn
        self.ctx = ctx
    }
}
