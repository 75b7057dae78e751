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

/// Refuses an empty key before any cache is opened (`get`, `rm` and `set`).
func validateKey(_ key: String) throws {
    if key.isEmpty {
        throw ValidationError("the key must not be empty")
    }
}
