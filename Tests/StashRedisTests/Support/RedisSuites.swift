#if Redis
import Testing

/// The suites of this target on Swift Testing but ``FuzzCorpusReplayTests``, nested here so that
/// their tests run one at a time, as the target's XCTest tests do.
@Suite(.serialized, .timeLimit(.minutes(5))) enum RedisSuites {}
#endif  // Redis
