import Foundation
import HabitSyncServer
import HabitSyncStore
import Testing

/// The signature receivers check, against the Standard Webhooks specification's own example,
/// and the retry schedule as a whole.
@Suite struct WebhookSignatureTests {
    /// The specification's test vector (standard-webhooks, "Signature scheme").
    @Test func theSpecificationsExampleSignsAsItSays() throws {
        let secret = try WebhookEndpointRequest.decodedSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = WebhookSignature.sign(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body, secret: secret)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        // A receiver rotating secrets gets several; one that matches is enough.
        #expect(WebhookSignature.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body, secret: secret, signatures: "v1,bm9wZQ== \(signature)"))
        // Another id, time or body does not verify.
        #expect(!WebhookSignature.verify(id: "msg_other", timestamp: 1_614_265_330, body: body, secret: secret, signatures: signature))
        #expect(!WebhookSignature.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_331, body: body, secret: secret, signatures: signature))
        #expect(!WebhookSignature.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body + [0x20], secret: secret, signatures: signature))
        #expect(!WebhookSignature.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body, secret: secret, signatures: "v2," + signature.dropFirst(3)))
    }

    @Test func theWaitsDoubleFromTheBaseUpToTheirCaps() {
        let schedule = WebhookRetrySchedule()
        #expect((1...12).map { schedule.delay(afterAttempt: $0) } == [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600].map { Duration.seconds($0) })
        #expect(schedule.delay(afterAttempt: 10_000) == .seconds(3600))
        #expect(schedule.delay(afterAttempt: 0) == .seconds(5) && schedule.delay(afterAttempt: -3) == .seconds(5))
        #expect((1...8).map { schedule.endpointPause(afterFailures: $0) } == [5, 10, 20, 40, 80, 160, 300, 300].map { Duration.seconds($0) })
        // The default twelve attempts span about 2.4 hours, as docs/operations.md says.
        #expect(schedule.span(attempts: 12) == .seconds(8715))
        #expect(schedule.span(attempts: 1) == .zero)
    }
}
