import EmbeddedPostgres
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP socket connected to `127.0.0.1:port` with Nagle off, for the load
/// generators' plain HTTP clients (the benchmark's and the event streams').
public func connectLoopbackSocket(port: Int) throws -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw HarnessError("socket() failed: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        let error = errno
        close(descriptor)
        throw HarnessError("connect() to port \(port) failed: errno \(error)")
    }
    var on: Int32 = 1
    setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    return descriptor
}

/// `recv` that retries when a signal interrupts it. A socket with `SO_RCVTIMEO` set is never
/// restarted by the kernel, whatever `SA_RESTART` says: any signal the test process takes (a
/// child exiting, for one) makes `recv` fail with `EINTR`, which is not the silence or the close
/// the caller is waiting for.
public func receiveRetryingInterrupts(_ descriptor: Int32, into buffer: inout [UInt8], flags: Int32 = 0) -> Int {
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, flags) }
        if count < 0, errno == EINTR { continue }
        return count
    }
}

/// A loopback port nothing listens on right now (`EmbeddedPostgres.freeLoopbackPort`).
public func freeLoopbackPort() throws -> Int { try EmbeddedPostgres.freeLoopbackPort() }
