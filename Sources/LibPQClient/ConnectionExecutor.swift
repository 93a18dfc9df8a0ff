import Dispatch

/// Where a leased connection's transaction runs (issue 46: "a connection that runs a
/// request's statements without a round trip through a thread pool each time"). A transaction's
/// body prefers this executor (`withTaskExecutorPreference`), so its Swift code and its libpq
/// calls run on one serial queue: a statement blocks that queue's thread and the code after it
/// continues there, instead of each statement hopping to the pool's thread and its answer
/// hopping back. A connection is lent to one transaction at a time, so the queue serves one
/// body; blocking it blocks nobody else.
///
/// A blocked queue holds one of libdispatch's threads, of which a process gets at most 255:
/// pools larger than `largestPool` keep every call on the pool's own threads
/// (`PGPool.withTransaction`), so that blocked transactions can never wait for a thread.
final class ConnectionExecutor: TaskExecutor {
    static let largestPool = 200

    private let queue: DispatchQueue
    private static let key = DispatchSpecificKey<ObjectIdentifier>()

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Whether the caller runs on this executor's queue (then a blocking call may run inline).
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) == ObjectIdentifier(self) }
}
