import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct MemoryCacheLimitTests {
    @Test func countLimitHoldsAfterEverySet() {
        let cache = makeMemoryCache(countLimit: 10)
        for i in 0..<100 {
            cache.setValue(i, forKey: "k\(i)")
            #expect(cache.count <= 10)
        }
        #expect(cache.keys == (90..<100).map { "k\($0)" })
    }

    @Test func costLimitHoldsAfterEverySet() {
        let cache = makeMemoryCache(costLimit: 100)
        var rng = SeededGenerator(seed: 1)
        for i in 0..<500 {
            cache.setValue(i, forKey: "k\(i % 50)", cost: Int.random(in: 0...60, using: &rng))
            #expect(cache.totalCost <= 100)
        }
    }

    @Test func loweringLimitsTrimsAtOnce() {
        let cache = makeMemoryCache()
        for i in 0..<10 { cache.setValue(i, forKey: "k\(i)", cost: 10) }
        cache.countLimit = 5
        #expect(cache.count == 5)
        #expect(cache.keys == (5..<10).map { "k\($0)" })
        cache.costLimit = 25
        #expect(cache.totalCost == 20)
        #expect(cache.keys == ["k8", "k9"])
        #expect(cache.countLimit == 5)
        #expect(cache.costLimit == 25)
    }

    @Test func anEntryCostlierThanTheLimitIsNotStoredAndRemovesTheOldValue() {
        let recorder = EvictionRecorder<String, Int>()
        let cache = makeMemoryCache(costLimit: 10)
        cache.onEvict = recorder.callback
        cache.setValue(1, forKey: "a", cost: 5)
        cache.setValue(2, forKey: "b", cost: 5)
        cache.setValue(3, forKey: "a", cost: 11)
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.value(forKey: "b") == 2, "other entries are untouched")
        #expect(cache.totalCost == 5)
        #expect(recorder.all.map(\.reason) == [.replaced, .costLimit])
        #expect(recorder.all.map(\.value) == [1, 3])
    }

    @Test func countLimitZeroStoresNothing() {
        let cache = makeMemoryCache(countLimit: 0)
        cache.setValue(1, forKey: "a")
        #expect(cache.count == 0)
        #expect(cache.value(forKey: "a") == nil)
    }

    @Test func negativeInputsAreClampedNotFatal() {
        let cache = makeMemoryCache()
        cache.setValue(1, forKey: "a", cost: -50)
        #expect(cache.totalCost == 0)
        #expect(cache.value(forKey: "a") == 1)
        cache.countLimit = -1
        #expect(cache.countLimit == 0)
        #expect(cache.count == 0)
        cache.countLimit = 5
        cache.costLimit = -3
        #expect(cache.costLimit == 0)
        cache.setValue(2, forKey: "b", cost: 0)
        #expect(cache.value(forKey: "b") == 2, "cost-0 entries fit a zero cost limit")
        cache.trim(toCount: -4)
        #expect(cache.count == 0)
        let negative = MemoryCache<String, Int>(configuration: .init(countLimit: -5, costLimit: -5, autoTrimInterval: nil))
        #expect(negative.countLimit == 0)
        #expect(negative.costLimit == 0)
    }

    @Test func negativeLimitsAreClampedWithOneWarningEachInTheInitialiserAndTheSetters() {
        // Given a configuration with negative limits,
        let log = LogRecorder()
        var configuration = MemoryCache<String, Int>.Configuration.forTesting(countLimit: -2, costLimit: -3)
        configuration.ageLimit = .seconds(-1)
        configuration.logger = log.logger

        // when a cache is created from it and a setter is given a negative value too,
        let cache = MemoryCache<String, Int>(configuration: configuration)
        cache.countLimit = -4

        // then every limit is 0 and each bad value was logged exactly once.
        #expect(cache.countLimit == 0 && cache.costLimit == 0 && cache.ageLimit == .zero)
        let warnings = log.messages(at: .warning)
        #expect(warnings.count == 4)
        for text in ["countLimit -2 is negative", "costLimit -3 is negative", "ageLimit", "countLimit -4 is negative"] {
            #expect(warnings.filter { $0.contains(text) }.count == 1, "\(text)")
        }
    }

    @Test func theConfigurationIsWhatTheCacheIsCreatedWith() {
        let clock = ManualClock()
        let configuration = MemoryCache<String, Int>.Configuration(
            label: "images", countLimit: 7, costLimit: 70, ageLimit: .seconds(9), policy: .fifo,
            autoTrimInterval: nil, releasesValuesInBackground: false, removesAllOnMemoryPressure: false,
            removesAllOnEnteringBackground: true, clock: clock)
        let cache = MemoryCache<String, Int>(configuration: configuration)
        #expect(cache.label == "images")
        #expect(cache.countLimit == 7 && cache.costLimit == 70 && cache.ageLimit == .seconds(9))
        #expect(cache.autoTrimInterval == nil)
        #expect(!cache.releasesValuesInBackground && !cache.removesAllOnMemoryPressure)
        #expect(cache.removesAllOnEnteringBackground)
        cache.setValue(1, forKey: "a")
        clock.advance(by: .seconds(9))
        #expect(cache.value(forKey: "a") == nil, "the configured clock drives expiry")

        let defaults = MemoryCache<String, Int>.Configuration()
        #expect(defaults.countLimit == .max && defaults.costLimit == .max && defaults.ageLimit == nil)
        #expect(defaults.policy == .s3FIFO && defaults.autoTrimInterval == .seconds(5))
        #expect(defaults.releasesValuesInBackground && defaults.removesAllOnMemoryPressure)
        let short = MemoryCache<String, Int>(countLimit: 3, policy: .lfu)
        #expect(short.countLimit == 3 && short.costLimit == .max && short.autoTrimInterval == .seconds(5))
        short.autoTrimInterval = nil
    }

    @Test func hugeCostsDoNotOverflowTheTotal() {
        let cache = makeMemoryCache()
        cache.setValue(1, forKey: "a", cost: .max)
        cache.setValue(2, forKey: "b", cost: .max)
        #expect(cache.totalCost == .max)
        #expect(cache.keys == ["b"])
    }
}
