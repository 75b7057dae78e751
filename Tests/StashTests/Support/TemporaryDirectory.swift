import Stash
import StashTestSupport

extension TemporaryDirectory {
    /// Registers `cache` to be closed before the directory is deleted, so its background check
    /// never races the deletion.
    func closeBeforeRemoval<Value>(_ cache: DiskCache<Value>) {
        closeBeforeRemoval { cache.close() }
    }
}
