import ArgumentParser

/// The `<directory> <key>` pair that `get` and `rm` take.
struct CacheKeyArguments: ParsableArguments {
    @Argument(help: "The cache's directory.")
    var directory: String

    @Argument(help: "The key: any non-empty string.")
    var key: String

    func validate() throws {
        try validateKey(key)
    }
}
