#if Redis
// StashTestSupport (the seeded generator, temporary directories, the log recorder, bounded
// waits) is visible to every file of this target through this import.
@_exported import StashTestSupport
#endif  // Redis
