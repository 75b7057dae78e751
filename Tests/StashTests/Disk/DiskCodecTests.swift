import Foundation
import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct DiskCodecTests {
    struct Profile: Codable, Equatable {
        var userName: String
        var joined: Date
    }

    // Before the codec copied its coders, changing the caller's instances
    // afterwards changed what the codec wrote and read.
    @Test func jsonCodecKeepsCopiesOfTheCoders() throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .secondsSince1970
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .secondsSince1970
        let codec = DiskCodec<Profile>.json(encoder: encoder, decoder: decoder)

        // Given the caller changes its coders after making the codec,
        encoder.keyEncodingStrategy = .useDefaultKeys
        encoder.dateEncodingStrategy = .iso8601
        decoder.keyDecodingStrategy = .useDefaultKeys
        decoder.dateDecodingStrategy = .iso8601

        // the codec still writes and reads with the settings it was given.
        let profile = Profile(userName: "ada", joined: Date(timeIntervalSince1970: 1_000))
        let bytes = try codec.encode(profile)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("\"user_name\""))
        #expect(text.contains("1000"))
        #expect(try codec.decode(bytes) == profile)
    }
}
