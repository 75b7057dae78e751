import Logging
import StashTestSupport
import Testing
@testable import Stash
#if ServiceLifecycle
import ServiceLifecycle
#endif

/// Shutdown: the background work `close()` waits for, what each `close()` stops, and the
/// `Service` conformances in a real `ServiceGroup`.
@Suite(.timeLimit(.minutes(5))) struct CacheLifecycleTests {
    @Test func closingAMemoryCacheStopsItsSweepAndKeepsItWorking() {
        let cache = MemoryCache<String, Int>(configuration: .init(countLimit: 2, autoTrimInterval: .seconds(1)))
        #expect(cache.autoTrimInterval == .seconds(1))
        cache.close()
        #expect(cache.autoTrimInterval == nil)
        for (index, key) in ["a", "b", "c"].enumerated() { cache.setValue(index, forKey: key) }
        #expect(cache.count == 2)  // the limits hold after close
        cache.close()  // again: nothing more
    }

    @Test func closingACacheClosesItsMemoryAndDiskTiers() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try Cache<String>(
                memory: MemoryCache(), disk: makeDiskCache(directory, codec: .string), remote: nil)
            try await cache.setValue("kept", forKey: "k")
            await cache.close()
            #expect(cache.memory?.autoTrimInterval == nil)
            await #expect { try await cache.disk?.value(forKey: "k") } throws: { ($0 as? StashError)?.code == .closed }
            #expect(try await cache.value(forKey: "k") == "kept")  // memory still answers
            await cache.close()  // again: nothing more
            let reopened = try makeDiskCache(directory, codec: .string)
            #expect(try await reopened.value(forKey: "k") == "kept")
        }
    }

    /// A refresh-ahead reload under way is background work too: `close` waits for it.
    @Test func closingACacheWaitsForARefreshAheadReload() async throws {
        let clock = ManualClock(start: 0)
        let cache = try Cache<String>(
            memory: MemoryCache(configuration: .init(clock: clock)), disk: nil, remote: nil,
            loadOptions: LoadOptions(ttl: .seconds(60), refreshAfter: .seconds(10)))
        _ = try await cache.value(forKey: "k") { _ in "v1" }
        clock.advance(by: .seconds(10))
        let gate = TestGate()
        #expect(try await cache.value(forKey: "k") { _ in try await gate.wait(); return "v2" } == "v1")
        try await yield(until: { gate.waitingCount == 1 }, onTimeout: gate.open)
        #expect(cache.core.background.count == 1)
        let closed = Counter()
        let closing = Task { await cache.close(); closed.increment() }
        try await yield(until: { clock.sleeperCount == 1 }, onTimeout: gate.open)  // close waits, on the cache's clock
        #expect(closed.count == 0)
        gate.open()
        await closing.value
        #expect(cache.memory?.value(forKey: "k") == "v2")  // the reload stored before close returned
    }

    #if ServiceLifecycle
    /// A standalone memory cache, a standalone disk cache and a cache with a disk tier in one
    /// group: each runs until graceful shutdown, then closes, and what the disk caches hold is
    /// there when they are opened again.
    @Test func cachesInAServiceGroupCloseOnGracefulShutdown() async throws {
        try await withTemporaryDirectory { directory in
            try await withTemporaryDirectory { standaloneDirectory in
            let memory = MemoryCache<String, String>(configuration: .init(autoTrimInterval: .seconds(1)))
            let disk = try makeDiskCache(directory, codec: .string)
            let cache = try Cache<String>(memory: MemoryCache(), disk: disk, remote: nil)
            try await cache.setValue("v", forKey: "k")
            let standalone = try makeDiskCache(standaloneDirectory, codec: .string)
            try await standalone.setValue("w", forKey: "j")
            let started = StartedService()
            let group = ServiceGroup(configuration: .init(
                services: [.init(service: memory), .init(service: standalone), .init(service: cache), .init(service: started)],
                logger: Logger(label: "test")))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                try await started.gate.wait()
                // Running: the disk answers until shutdown.
                #expect(try await disk.value(forKey: "k") == "v")
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            #expect(memory.autoTrimInterval == nil)
            await #expect { try await disk.value(forKey: "k") } throws: { ($0 as? StashError)?.code == .closed }
            await #expect { try await standalone.value(forKey: "j") } throws: { ($0 as? StashError)?.code == .closed }
            #expect(try await makeDiskCache(directory, codec: .string).value(forKey: "k") == "v")
            #expect(try await makeDiskCache(standaloneDirectory, codec: .string).value(forKey: "j") == "w")
            }
        }
    }
    #endif
}

#if ServiceLifecycle
/// A service that opens its gate when the group runs it: a test waits for it before triggering
/// the group's shutdown, so that the shutdown finds every service running.
final class StartedService: Service {
    let gate = TestGate()

    func run() async throws {
        gate.open()
        try? await gracefulShutdown()
    }
}
#endif
