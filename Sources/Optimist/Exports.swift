// `import Optimist` is the whole Swift API: the model (keys, JSON, ops, errors, statuses), the
// store, its sync, and opening stores; this module adds Codable records and typed collections.
@_exported import OptimistModel
@_exported import OptimistCore
@_exported import OptimistSync
@_exported import OptimistOpen
