/// XP and level from the ledger (the userProgress record). Level L starts at 300·(L−1)² XP
/// (seed erratum 4: level 1 at 0, 2 at 300, 3 at 1200, 4 at 2700), and the total never goes
/// below zero while the ledger keeps every amount (erratum 5).
public struct UserProgress: Sendable, Equatable {
    public let totalXP: Int
    public let currentLevel: Int
    public let xpForCurrentLevel: Int
    public let xpForNextLevel: Int

    public init(ledgerSum: Int) {
        totalXP = max(0, ledgerSum)
        var level = Int((Double(totalXP) / 300).squareRoot()) + 1
        // Guard against floating-point edges around perfect squares.
        while 300 * level * level <= totalXP { level += 1 }
        while level > 1 && 300 * (level - 1) * (level - 1) > totalXP { level -= 1 }
        currentLevel = level
        xpForCurrentLevel = totalXP - 300 * (level - 1) * (level - 1)
        xpForNextLevel = 300 * level * level - 300 * (level - 1) * (level - 1)
    }
}
