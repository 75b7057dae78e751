import ArgumentParser
import Stash

@main
struct StashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stash",
        abstract: "Inspect and manage Stash caches.",
        subcommands: [Demo.self]
    )
}
