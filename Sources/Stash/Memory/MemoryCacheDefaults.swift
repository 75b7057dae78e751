/// Platform-dependent defaults of ``MemoryCache``.
public enum MemoryCacheDefaults {
    /// `true` on iOS, tvOS and visionOS, where a backgrounded app should give
    /// memory back; `false` elsewhere.
    public static var removesAllOnEnteringBackground: Bool {
        #if os(iOS) || os(tvOS) || os(visionOS)
        true
        #else
        false
        #endif
    }
}
