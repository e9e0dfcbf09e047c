import COptimist
import OptimistModel

// The versioned option structs of Include/optimist.h (optimist_open_options,
// optimist_mutate_options, optimist_sync_options), read through the COptimist module.
//
// They are versioned the libgit2 way: the first member is the version the caller was compiled
// against, and each later version only ever appends members. A caller built against an older
// header passes a shorter struct, so the library never loads a struct whole: it checks the
// version, then reads each member it needs at the offset the compiler gives the header's
// struct, only those the caller's version has.

/// Member `member` of an options struct `S` that `p` points to: its bytes alone, at the
/// header's offset.
func member<S, T>(_ p: UnsafeRawPointer, _ member: KeyPath<S, T>) -> T {
    p.load(fromByteOffset: MemoryLayout<S>.offset(of: member)!, as: T.self)
}

/// The version of an options struct (its first member, an `unsigned int`), checked against the
/// versions this library reads: `newest`, the header's `OPTIMIST_*_OPTIONS_VERSION`, and every
/// older one.
func optionsVersion(_ p: UnsafeRawPointer, struct name: StaticString, newest: Int32, initMacro: StaticString)
    throws(OptimistError) -> UInt32 {
    let version = p.load(as: UInt32.self)
    guard version >= 1, version <= UInt32(newest) else {
        throw .misuse("\(name).version is \(version); this library reads versions 1 to \(newest): initialise the struct with \(initMacro)")
    }
    return version
}
