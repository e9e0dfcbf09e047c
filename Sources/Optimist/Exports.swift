@_exported import OptimistCore
