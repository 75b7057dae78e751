#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// A blocking load under way: its leader thread runs the loader; other
/// threads wait on `done` and then read `result`.
final class BlockingFlight<Value: Sendable>: Sendable {
    /// The leader thread, to catch a loader that asks for its own key.
    let leader = currentThreadID()
    let done = DispatchGroup()
    let result = LockedValue<Result<Value, any Error>?>(nil)

    init() {
        done.enter()
    }
}

/// The calling thread's identity.
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

extension LoadingEngine {
    // MARK: - Blocking get or load

    /// The blocking counterpart of ``resolve(_:found:options:target:loader:)``:
    /// the first thread to miss runs `loader` itself, the others block until it ends.
    func resolveBlocking(
        _ key: Key, found: LoadLookup<Value>, options: LoadOptions,
        fresh: @escaping @Sendable () -> Value?,
        store: @escaping @Sendable (Value, UInt64) -> Void, begin: @escaping @Sendable () -> UInt64,
        end: @escaping @Sendable (UInt64) -> Void, loader: @escaping @Sendable (Key) throws -> Value
    ) throws -> Value {
        let stale: Value?
        switch found {
        case .fresh(let value, let isDue):
            if isDue {
                DispatchQueue.global(qos: .utility).async { [self] in
                    let (flight, leads) = flight(for: key)
                    guard leads else { return }
                    addRefresh()
                    _ = try? runBlocking(
                        key, flight: flight, options: options, store: store, begin: begin, end: end, loader: loader)
                }
            }
            return value
        case .stale(let value): stale = value
        case .miss: stale = nil
        }
        if let error = cachedError(forKey: key) {
            return try staleOr(stale, error)
        }
        do {
            let (flight, leads) = flight(for: key)
            if leads {
                // Another leader may have stored the key since this caller's lookup.
                if let value = fresh() {
                    finish(key, flight: flight, with: .success(value))
                    return value
                }
                return try runBlocking(
                    key, flight: flight, options: options, store: store, begin: begin, end: end, loader: loader)
            }
            if flight.leader == currentThreadID() {
                throw StashError(.recursiveLoad, "the loader of a key asked the cache for that same key")
            }
            flight.done.wait()
            return try flight.result.withLock { $0! }.get()
        } catch let error where Self.allowsStale(error) {
            return try staleOr(stale, error)
        }
    }

    /// The flight of `key` under way, or a new one that this thread leads.
    private func flight(for key: Key) -> (flight: BlockingFlight<Value>, leads: Bool) {
        blockingFlights.withLock { flights in
            if let flight = flights[key] { return (flight, false) }
            let flight = BlockingFlight<Value>()
            flights[key] = flight
            return (flight, true)
        }
    }

    private func runBlocking(
        _ key: Key, flight: BlockingFlight<Value>, options: LoadOptions,
        store: (Value, UInt64) -> Void, begin: () -> UInt64, end: (UInt64) -> Void,
        loader: (Key) throws -> Value
    ) throws -> Value {
        let ticket = begin()
        let start = clock.nanosecondsNow
        let result: Result<Value, any Error>
        do {
            let value = try loader(key)
            recordSuccess(since: start)
            store(value, ticket)
            result = .success(value)
        } catch {
            end(ticket)
            recordFailure(error, keys: [key], options: options, since: start)
            result = .failure(error)
        }
        finish(key, flight: flight, with: result)
        return try result.get()
    }

    /// Publishes a flight's result and wakes its waiters.
    private func finish(_ key: Key, flight: BlockingFlight<Value>, with result: Result<Value, any Error>) {
        flight.result.withLock { $0 = result }
        blockingFlights.withLock { _ = $0.removeValue(forKey: key) }
        flight.done.leave()
    }
}
