import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTask {
    /// Cancels the task from another thread, without waiting. For cancellation handlers: they
    /// run while Swift holds the cancelled task's status lock, and on Linux `cancel()` waits for
    /// the session's work queue, whose thread may be waiting for that same lock to resume the
    /// task with a response (swift-corelibs-foundation issue 5412): both wait forever. Found by
    /// the convergence suite, whose devices are killed mid-sync, hanging on a busy machine.
    func cancelLater() {
        DispatchQueue.global().async { self.cancel() }
    }
}
