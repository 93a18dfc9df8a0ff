import NIOCore
import NIOPosix

/// Stops the listener accepting connections, then lets every connection it had accepted reach
/// the HTTP server, before Hummingbird's graceful shutdown closes the listener. NIO drops a
/// connection that was accepted but not yet handed to the server when the listener closes, and
/// dropping it traps the process ("Deinited NIOAsyncWriter without calling finish()",
/// swift-nio #2637 and #3481); a suite run ended that way once.
///
/// A connection travels from accept to the server as a chain of tasks hopping between the
/// listener's event loop and its own. Each round below runs one task on every loop, after all
/// that was queued there before it, so once accepting has stopped, `rounds` rounds outlast any
/// chain of that many hops. Nothing here waits for a time.
enum ListenerQuiescing {
    /// More than the hops from accept to hand-over (options, initializer, transformation, each
    /// a hop out and back).
    static let rounds = 8

    /// `loops`: the event loops connections are served on (Hummingbird's default, the
    /// singleton group, as `buildApplication` leaves it).
    static func stopAccepting(_ listener: any Channel, loops: [any EventLoop]) async {
        // autoRead off on a listening socket: no further accept; what waits in the backlog is
        // refused when the listener closes.
        try? await listener.setOption(ChannelOptions.autoRead, value: false).get()
        for _ in 0..<rounds {
            for loop in loops + [listener.eventLoop] {
                try? await loop.submit {}.get()
            }
        }
    }

    static var servingLoops: [any EventLoop] {
        Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
    }
}
