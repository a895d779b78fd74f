#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileSystemErrorCode {
    /// The file holds more bytes than the caller's limit (`EFBIG`): see ``FileSystem/contents(of:limit:)``.
    public static var tooLarge: Self { .other(EFBIG) }
}
