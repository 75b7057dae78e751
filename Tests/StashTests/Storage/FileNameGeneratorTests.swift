import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct FileNameGeneratorTests {
    @Test func namesAreThirtyTwoHexDigitsAndDistinct() {
        var generator = FileNameGenerator()
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let name = generator.next()
            #expect(name.utf8.count == 32)
            #expect(name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            seen.insert(name)
        }
        #expect(seen.count == 10_000)
    }

    @Test func twoGeneratorsStartApart() {
        var first = FileNameGenerator()
        var second = FileNameGenerator()
        let firstNames = Set((0..<1_000).map { _ in first.next() })
        let secondNames = Set((0..<1_000).map { _ in second.next() })
        #expect(firstNames.isDisjoint(with: secondNames))
    }
}
