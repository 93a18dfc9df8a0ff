import Synchronization

/// Counts round trips to the server (each query, simple query or pipeline is one), so tests
/// and benchmarks can check that a batch costs a constant number of them; and, while asked
/// to, keeps the parameterised statements sent (`query` and `pipeline`), so a test can read
/// their plans.
public final class StatementCounter: Sendable {
    private let value = Atomic<Int>(0)
    private let recorded = Mutex<[PGQuery]?>(nil)
    public init() {}
    public var count: Int { value.load(ordering: .relaxed) }
    func increment() { value.add(1, ordering: .relaxed) }

    public func startRecording() { recorded.withLock { $0 = [] } }

    /// The statements sent since `startRecording`, in order; recording stops.
    public func stopRecording() -> [PGQuery] {
        recorded.withLock { queries in
            defer { queries = nil }
            return queries ?? []
        }
    }

    func note(_ query: PGQuery) { recorded.withLock { $0?.append(query) } }
}
