/// Every order in which a few items can arrive: the property tests of merge rules try them all.
public enum ArrivalOrder {
    /// All `n!` orders of `items` (keep `n` small: 5 items are 120 orders).
    public static func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }
}
