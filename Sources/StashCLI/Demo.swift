import ArgumentParser
import Stash

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A short tour of Stash's caches, printing what happens."
    )

    func run() throws {
        print("Stash demo")
    }
}
