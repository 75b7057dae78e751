extension CacheCore {
    /// See ``Cache/close(timeout:)``.
    func close(timeout: Duration) async {
        let finished = await finishes(within: timeout, on: clock) { [self] in
            await remoteLink?.close()
            await background.waitUntilIdle()
        }
        if !finished, remoteLink != nil || background.count > 0 {
            logger.warning(
                "closing the cache: background work had not finished (timed out or cancelled); changes may not reach the remote tier",
                metadata: ["running": "\(background.count)", "timeout": "\(timeout)"])
        }
        if let remoteLink {
            switch remoteLink.staleKeyCount {
            case nil:
                logger.warning("closing the cache: the remote tier is distrusted (a removeAll failed there); other instances may read older copies")
            case let count? where count > 0:
                logger.warning(
                    "closing the cache: keys whose shared copy is older than this instance's were not repaired; other instances may read them until they expire",
                    metadata: ["keys": "\(count)"])
            default:
                break
            }
        }
        memory?.close()
        await disk?.close()
    }

    /// See `Cache.closeWithoutWaiting()`.
    func closeWithoutWaiting() {
        remoteLink?.stop()
        memory?.close()
        disk?.close()
    }
}
