import HTTPTypes

extension HTTPCacheRules {
    /// Request fields whose list members are compared in any order and any case.
    static let unorderedFields: Set<String> = ["accept-language", "accept-encoding", "accept", "accept-charset"]

    /// The lower-cased names `Vary` lists, deduplicated and sorted; `["*"]` for `*` anywhere or a
    /// name that is not a valid field name (which can never match); empty without `Vary`.
    static func varyNames(_ fields: HTTPFields) -> [String]? {
        var names = Set<String>()
        for line in fields[values: .vary] {
            for member in line.split(separator: ",", omittingEmptySubsequences: false) {
                let name = member.trimmingSpaces.lowercased()
                if name.isEmpty { continue }
                if name == "*" || HTTPField.Name(name) == nil { return ["*"] }
                names.insert(name)
            }
        }
        return names.sorted()
    }

    /// The normalised values of the request fields `names` lists, in the same order
    /// (RFC 9111 §4.1): lines combined, whitespace around members dropped, and the
    /// members of `Accept-*` fields lower-cased and sorted.
    static func varyValues(names: [String], request: HTTPRequest) -> [StoredResponse.VaryValue] {
        names.map { name in
            StoredResponse.VaryValue(name: name, value: normalisedValue(name: name, request: request))
        }
    }

    static func normalisedValue(name: String, request: HTTPRequest) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        let lines = request.headerFields[values: fieldName]
        guard !lines.isEmpty else { return nil }
        var members: [String] = []
        for line in lines {
            for member in line.split(separator: ",") {
                let trimmed = member.trimmingSpaces
                if !trimmed.isEmpty { members.append(trimmed) }
            }
        }
        if unorderedFields.contains(name) {
            members = members.map { $0.lowercased().replacingSpaces() }.sorted()
        }
        return members.joined(separator: ",")
    }

    /// Whether `stored` was produced for a request with the same selecting fields as `request`.
    static func varyMatches(_ stored: StoredResponse, request: HTTPRequest) -> Bool {
        for value in stored.varyValues where value.name == "*" { return false }
        for value in stored.varyValues where normalisedValue(name: value.name, request: request) != value.value {
            return false
        }
        return true
    }
}

extension String {
    /// The string without spaces and tabs.
    func replacingSpaces() -> String { String(filter { $0 != " " && $0 != "\t" }) }
}
