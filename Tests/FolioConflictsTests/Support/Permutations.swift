/// Every order of `items` (n! of them), in a fixed order.
func permutations<T>(_ items: [T]) -> [[T]] {
    guard items.count > 1 else { return [items] }
    var result: [[T]] = []
    for index in items.indices {
        var rest = items
        let first = rest.remove(at: index)
        for tail in permutations(rest) { result.append([first] + tail) }
    }
    return result
}
