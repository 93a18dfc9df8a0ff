import Foundation
import HabitSyncDomain
import Testing

/// The pure rules behind epochs and digests (protocol.md, "Epochs", "Digests").
@Suite struct SyncIntegrityTests {
    @Test func md5TermsFollowRFC1321() {
        // RFC 1321's test suite, through the digest's term (its first 8 bytes).
        let vectors = [
            "": "d41d8cd98f00b204", "a": "0cc175b9c0f1b6a8", "abc": "900150983cd24fb0", "message digest": "f96b697d7cb7938d",
            "abcdefghijklmnopqrstuvwxyz": "c3fcd3d76192e400",
            "12345678901234567890123456789012345678901234567890123456789012345678901234567890": "57edf4a22be3c955",
        ]
        for (message, prefix) in vectors {
            #expect(RecordDigest.md5Prefix(Array(message.utf8)) == UInt64(prefix, radix: 16), "\(message)")
        }
    }

    @Test func theTermIsOfTheLowercaseIdAndTheDecimalVersion() throws {
        let id = try #require(UUID(uuidString: "0F8FAD5B-D9CB-469F-A165-70867728950E"))
        #expect(RecordDigest.term(id: id, serverVersion: 42) == RecordDigest.md5Prefix(Array("0f8fad5b-d9cb-469f-a165-70867728950e:42".utf8)))
        var digest = RecordDigest()
        digest.add(id: id, serverVersion: 42)
        #expect(digest.count == 1 && digest.hash == RecordDigest.term(id: id, serverVersion: 42))
        #expect(digest.hashText.count == 16 && RecordDigest(count: 1, hashText: digest.hashText) == digest)
    }

    @Test func theDigestIgnoresOrderAndSeesEveryDifference() {
        let records = (0..<50).map { (UUID(), Int64($0 + 1)) }
        var forward = RecordDigest(), backward = RecordDigest()
        for (id, version) in records { forward.add(id: id, serverVersion: version) }
        for (id, version) in records.reversed() { backward.add(id: id, serverVersion: version) }
        #expect(forward == backward)
        var missing = RecordDigest(), otherVersion = RecordDigest()
        for (id, version) in records.dropLast() { missing.add(id: id, serverVersion: version); otherVersion.add(id: id, serverVersion: version) }
        otherVersion.add(id: records[49].0, serverVersion: records[49].1 + 1)
        #expect(missing != forward && otherVersion != forward)
    }

    @Test(arguments: [
        "", "0123456789abcde", "0123456789ABCDEF", "0123456789abcdef.", "0123456789abcdef.0123456789abcdeg",
        "0123456789abcdef.0123456789abcdef.0123456789abcdef", "0123456789abcdef\n", "０123456789abcdef",
    ])
    func malformedEpochsAreRefused(text: String) {
        #expect(SyncEpoch(text) == nil)
    }

    @Test func epochsRoundTrip() throws {
        let both = try #require(SyncEpoch("0123456789abcdef.fedcba9876543210"))
        #expect(both.database == "0123456789abcdef" && both.account == "fedcba9876543210" && both.text == "0123456789abcdef.fedcba9876543210")
        #expect(try #require(SyncEpoch("0123456789abcdef")).account == nil)
    }

    @Test func theVerdictSaysWhatTheDeviceMustDo() throws {
        let db = "aaaaaaaaaaaaaaaa", account = "bbbbbbbbbbbbbbbb"
        let server = EpochCheck.ServerState(database: db, account: account, restoredThrough: 8, counter: 11)
        let current = SyncEpoch(database: db, account: account)
        #expect(EpochCheck.verdict(device: current, seenVersion: 11, server: server) == nil)
        #expect(EpochCheck.verdict(device: nil, seenVersion: nil, server: server) == nil)
        #expect(
            EpochCheck.verdict(device: SyncEpoch(database: db, account: nil), seenVersion: 3, server: server) == nil,
            "a device that synced before the user had a row")
        #expect(EpochCheck.verdict(device: current, seenVersion: 12, server: server) == .resetRequired(highWaterMark: 11))
        #expect(EpochCheck.verdict(device: nil, seenVersion: 900_000_000, server: server) == .resetRequired(highWaterMark: 11))
        #expect(
            EpochCheck.verdict(device: SyncEpoch(database: "cccccccccccccccc", account: account), seenVersion: 13, server: server)
                == .resetRequired(highWaterMark: 8), "restored: what the backup held, not the counter since")
        #expect(
            EpochCheck.verdict(
                device: SyncEpoch(database: "cccccccccccccccc", account: account), seenVersion: nil,
                server: .init(database: db, account: nil, restoredThrough: 0, counter: 0)) == .resetRequired(highWaterMark: 0))
        #expect(EpochCheck.verdict(device: SyncEpoch(database: db, account: "dddddddddddddddd"), seenVersion: 1, server: server) == .accountRestarted)
        #expect(
            EpochCheck.verdict(device: current, seenVersion: nil, server: .init(database: db, account: nil, restoredThrough: 0, counter: 0))
                == .accountRestarted, "erased and allowed again, nothing stored yet")
    }
}
