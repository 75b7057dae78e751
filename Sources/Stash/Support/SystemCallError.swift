#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call, carrying the call's name and `errno`.
///
/// Appears as the ``StashError/cause`` of ``StashError/Code/ioFailed`` and
/// ``StashError/Code/directoryUnusable`` errors.
public struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name of the call that failed, for example `"open"` or `"rename"`.
    public var call: String
    /// The value of `errno` after the call.
    public var errno: Int32

    /// Creates an error for a failed system call.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The operating system's description of ``errno``, such as
    /// `"No space left on device"`.
    public var reason: String {
        String(cString: strerror(errno))
    }

    /// The call, the system's description of `errno`, and its number.
    public var description: String {
        "\(call) failed: \(reason) (errno \(errno))"
    }
}
