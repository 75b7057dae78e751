import Testing
@testable import Stash

@Suite(.timeLimit(.minutes(5))) struct StashErrorTests {
    func failing(_ code: StashError.Code) throws(StashError) {
        throw StashError(code, "test")
    }

    @Test func aCatchClauseMatchesACode() {
        var caught: [String] = []
        for code in [StashError.Code.invalidKey, .valueTooLarge, .closed] {
            do throws(StashError) {
                try failing(code)
            } catch StashError.Code.invalidKey {
                caught.append("invalidKey")
            } catch StashError.Code.valueTooLarge {
                caught.append("valueTooLarge")
            } catch {
                caught.append("other: \(error.code)")
            }
        }
        #expect(caught == ["invalidKey", "valueTooLarge", "other: closed"])
    }

    @Test func anUntypedErrorMatchesOnlyItsOwnCode() {
        let error: any Error = StashError(.ioFailed, "disk")
        #expect(StashError.Code.ioFailed ~= error)
        #expect(!(StashError.Code.closed ~= error))
        #expect(!(StashError.Code.ioFailed ~= SystemCallError(call: "open", errno: 2)))
    }
}
