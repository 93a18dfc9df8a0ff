/// Latency samples in milliseconds and their percentiles.
struct Percentiles: Codable {
    let p50: Double
    let p95: Double
    let p99: Double
    let count: Int

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        func at(_ q: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))] }
        p50 = at(0.5)
        p95 = at(0.95)
        p99 = at(0.99)
        count = sorted.count
    }
}
