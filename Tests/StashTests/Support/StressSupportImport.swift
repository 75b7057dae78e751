// The self-describing stress values live in the StressSupport target, shared with the
// `stash-stress` helper; the seeded generator (SplitMix64), temporary directories, the log
// recorder and the bounded waits in StashTestSupport, shared by every test target. Every test
// file sees both through these imports.
@_exported import StashTestSupport
@_exported import StressSupport
