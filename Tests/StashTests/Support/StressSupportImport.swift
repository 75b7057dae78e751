// The seeded generator (SplitMix64) and the self-describing stress values live in
// the StressSupport target, shared with the `stash-stress` helper; every test
// file sees them through this import.
@_exported import StressSupport
