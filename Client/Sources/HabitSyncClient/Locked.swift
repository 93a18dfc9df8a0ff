import Foundation

/// A value behind a lock: the SDK's few pieces of state shared between URLSession's threads
/// and the caller's. Not `Synchronization.Mutex`, which needs macOS 15 / iOS 18 / watchOS 11,
/// while the SDK supports macOS 14 / iOS 17 / watchOS 10.
///
/// `@unchecked Sendable` is safe: `value` is private and only touched inside `withLock`, with
/// `lock` held, so no two threads reach it at once; and `Value` is `Sendable`, so nothing a
/// caller takes out of the lock is shared unsafely after it.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
