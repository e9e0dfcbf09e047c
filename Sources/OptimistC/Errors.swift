#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import COptimist
import OptimistModel

// The per-thread last-error message, and the helpers every entry point uses to turn a thrown
// `OptimistError` into a result code without letting anything cross the C boundary. The codes
// themselves (OPTIMIST_OK ...) come from Include/optimist.h through the COptimist module.

/// The thread-specific slot holding this thread's last error message (a malloc'd C string).
/// Its destructor frees the message when the thread exits, so threads that fail once and end
/// do not leak. Created once, lazily (Swift globals are initialised exactly once).
let lastErrorKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key) { p in free(p) }
    // Without a key there is nowhere to keep messages; `optimist_last_error` then reports
    // that, and every result code still works.
    return rc == 0 ? key : pthread_key_t.max
}()

/// Replaces this thread's last error message (the previous one is freed).
func setLastError(_ message: String) {
    let key = lastErrorKey
    guard key != pthread_key_t.max else { return }
    let old = pthread_getspecific(key)
    // `strdup` stops at a NUL; messages never hold one that matters.
    let copy = strdup(message)
    if pthread_setspecific(key, copy) == 0 {
        free(old)
    } else {
        free(copy)
    }
}

/// Records `error` as this thread's last error and returns its result code.
func fail(_ error: OptimistError) -> Int32 {
    setLastError(error.message)
    return error.code
}

/// Records a boundary-check failure: `code` with `message`.
func fail(_ code: Int32, _ message: String) -> Int32 {
    setLastError(message)
    return code
}

/// Runs `body`, mapping a thrown `OptimistError` to its code (and last error) and success to
/// `OPTIMIST_OK`. Entry points wrap their whole body in it.
@inline(__always)
func guarded(_ body: () throws(OptimistError) -> Void) -> Int32 {
    do {
        try body()
        return OPTIMIST_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("optimist_errstr")
public func optimist_errstr(_ rc: Int32) -> UnsafePointer<CChar> {
    let text: StaticString
    switch rc {
    case OPTIMIST_OK: text = "not an error"
    case OPTIMIST_ERROR: text = "internal error"
    case OPTIMIST_MISUSE: text = "misuse: NULL or closed handle, or bad argument"
    case OPTIMIST_NOTFOUND: text = "not found"
    case OPTIMIST_STATE: text = "the mutation is not in a state that allows this"
    case OPTIMIST_INVALID: text = "invalid: malformed JSON or UTF-8, not an object, or an op that cannot apply"
    case OPTIMIST_DUPLICATE: text = "duplicate: a not-yet-ended mutation holds this dedupe key"
    case OPTIMIST_IO: text = "I/O error"
    case OPTIMIST_CORRUPT: text = "not an optimist store, or damaged"
    case OPTIMIST_BUSY: text = "busy: the store file is held by another process"
    default: text = "unknown result code"
    }
    return cString(text)
}

@_cdecl("optimist_last_error")
public func optimist_last_error() -> UnsafePointer<CChar> {
    let key = lastErrorKey
    guard key != pthread_key_t.max else { return cString("no thread-local slot for error messages") }
    guard let p = pthread_getspecific(key) else { return cString("") }
    return UnsafePointer(p.assumingMemoryBound(to: CChar.self))
}

@_cdecl("optimist_free")
public func optimist_free(_ p: UnsafeMutableRawPointer?) {
    free(p)
}

/// OPTIMIST_VERSION of the header this library was built from, as a C string that lives as long
/// as the process (made once; the header is the one place the version is written).
nonisolated(unsafe) private let versionCString: UnsafePointer<CChar> = UnsafePointer(strdup(OPTIMIST_VERSION)!)

@_cdecl("optimist_version")
public func optimist_version() -> UnsafePointer<CChar> {
    versionCString
}

/// A C string with static lifetime: Swift emits string literals NUL-terminated in the binary's
/// read-only data, so the pointer stays valid for the life of the process and is never freed.
func cString(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}
