import Foundation
import Testing

@testable import HabitSyncClient

/// `exportAccount()` hands back only whole documents: the trailer says complete and its counts
/// match the sections (docs/accounts.md).
@Suite struct ExportCheckTests {
    static let whole = #"{"format":"habitsync-export","changes":[{"a":1},{"b":2}],"devices":[{"d":1}],"counts":{"changes":2,"devices":1},"complete":true}"#

    @Test func aWholeDocumentPasses() {
        #expect(SyncEngine.isCompleteExport(Data(Self.whole.utf8)))
    }

    @Test(arguments: [
        #"{"format":"habitsync-export","changes":[{"a":1},{"b":2}],"devices":[{"d":1}]}"#,  // no trailer (an old server, or cut)
        #"{"format":"habitsync-export","changes":[{"a":1},{"b":2}],"devices":[{"d":1}],"counts":{"changes":2,"devices":1}"#,  // cut short
        #"{"format":"habitsync-export","changes":[{"a":1}],"devices":[{"d":1}],"counts":{"changes":2,"devices":1},"complete":true}"#,  // fewer than counted
        #"{"format":"habitsync-export","changes":[],"counts":{},"complete":true}"#,  // counts nothing
        #"{"format":"habitsync-export","changes":[{"a":1},{"b":2}],"devices":[{"d":1}],"counts":{"changes":2,"devices":1},"complete":false}"#,
    ])
    func aCutOrInconsistentDocumentFails(_ text: String) {
        #expect(!SyncEngine.isCompleteExport(Data(text.utf8)))
    }
}
