import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Starting child processes from tests (the `stash` CLI, the `stash-stress`
// helper): posix_spawn rather than Foundation's `Process`, whose internal
// reference cycles LeakSanitizer reports as leaks in the address-sanitizer run.

/// Held while a test creates a child's pipes or terminal and spawns it, until
/// the parent has closed the child's ends: descriptors are made close-on-exec
/// only after they exist, so without this lock a child spawned by a test running
/// in parallel could inherit them, and a reader would never see end-of-file.
let childSpawnLock = NSLock()

/// A pipe with both ends close-on-exec (a `dup2` onto a child's 0, 1 or 2 clears
/// the flag there). Call with ``childSpawnLock`` held.
func makeChildPipe() throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
    _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
    return (fds[0], fds[1])
}

#if canImport(Darwin)
/// `posix_spawn_file_actions_t`: an optional opaque pointer on Darwin, a struct on Glibc.
typealias SpawnFileActions = posix_spawn_file_actions_t?
#else
typealias SpawnFileActions = posix_spawn_file_actions_t
#endif

/// Starts `executable` with `arguments` (after argv[0]) and this process's
/// environment, once `fileActions` has set up the child's descriptors. Call with
/// ``childSpawnLock`` held.
///
/// - Returns: The child's process id.
/// - Throws: `POSIXError` with the code `posix_spawn` returned.
func spawnChild(
    _ executable: String, _ arguments: [String], fileActions: (inout SpawnFileActions) -> Void
) throws -> pid_t {
    #if canImport(Darwin)
    var actions: SpawnFileActions = nil
    #else
    var actions = SpawnFileActions()
    #endif
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    fileActions(&actions)
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    // From Foundation: Swift's Darwin module does not export `environ`.
    let environment: [UnsafeMutablePointer<CChar>?] =
        ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { environment.forEach { free($0) } }
    var child: pid_t = 0
    let result = posix_spawn(&child, executable, &actions, nil, argv, environment)
    guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
    return child
}

/// A status from `waitpid`, decoded (WIFEXITED, WEXITSTATUS, WTERMSIG).
struct WaitStatus {
    var raw: Int32

    /// The signal that ended the child, or 0 if it exited.
    var signal: Int32 { raw & 0x7F }

    /// The exit status, or 128 + the signal that ended the child (as shells report it).
    var code: Int32 { signal == 0 ? (raw >> 8) & 0xFF : 128 + signal }

    /// Whether the child exited normally with status 0.
    var exitedCleanly: Bool { signal == 0 && code == 0 }
}
