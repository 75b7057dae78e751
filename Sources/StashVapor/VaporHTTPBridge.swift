#if Vapor
import HTTPTypes
import NIOCore
import NIOHTTP1
import StashHTTP
import Vapor

// Vapor 4's requests and responses (NIOHTTP1's types) as swift-http-types' ones, which the cache
// speaks, and back.

extension HTTPFields {
    /// `headers`, in order; a field whose name is not a valid token is left out.
    init(_ headers: HTTPHeaders) {
        self.init()
        reserveCapacity(headers.count)
        for (name, value) in headers {
            guard let name = HTTPField.Name(name) else { continue }
            append(HTTPField(name: name, value: value))
        }
    }
}

extension HTTPHeaders {
    /// `fields`, in order.
    init(_ fields: HTTPFields) {
        self.init(fields.map { ($0.name.rawName, $0.value) })
    }
}

extension HTTPRequest {
    /// `request`'s head. A server's request has no scheme, and its authority is its `Host` field:
    /// the cache's key needs both (`http`, and `localhost` without a `Host`).
    init(_ request: Vapor.Request) {
        var target = request.url.path.isEmpty ? "/" : request.url.path
        if let query = request.url.query { target += "?" + query }
        self.init(
            method: HTTPRequest.Method(request.method.rawValue) ?? .get, scheme: "http",
            authority: request.headers.first(name: .host) ?? "localhost", path: target,
            headerFields: HTTPFields(request.headers))
    }
}

extension HTTPResponse {
    /// `response`'s head.
    init(_ response: Vapor.Response) {
        self.init(
            status: HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase),
            headerFields: HTTPFields(response.headers))
    }
}

extension Vapor.Request {
    /// This request, its method and headers replaced by `head`'s (the cache's validators).
    func sending(_ head: HTTPRequest) -> Vapor.Request {
        method = HTTPMethod(rawValue: head.method.rawValue)
        headers = HTTPHeaders(head.headerFields)
        return self
    }

    /// A new request like this one, with `head`'s method and headers: for a route run after the
    /// answer, when this request may be gone.
    func copy(sending head: HTTPRequest) -> Vapor.Request {
        let copy = Vapor.Request(
            application: application, method: HTTPMethod(rawValue: head.method.rawValue), url: url,
            version: version, headersNoUpdate: HTTPHeaders(head.headerFields), collectedBody: body.data,
            remoteAddress: remoteAddress, logger: logger, byteBufferAllocator: byteBufferAllocator, on: eventLoop)
        copy.parameters = parameters
        copy.route = route
        return copy
    }
}

extension Vapor.Response {
    /// The cache's answer as Vapor's response; a streamed body is written as it is read.
    convenience init(_ head: HTTPResponse, body: HTTPCacheBody, allocator: ByteBufferAllocator) {
        let status = HTTPResponseStatus(statusCode: head.status.code, reasonPhrase: head.status.reasonPhrase)
        let headers = HTTPHeaders(head.headerFields)
        if let bytes = body.bufferedBytes {
            self.init(status: status, headers: headers, body: .init(buffer: allocator.buffer(bytes: bytes)))
            return
        }
        let count = head.headerFields[.contentLength].flatMap { Int($0) } ?? -1
        self.init(status: status, headers: headers, body: .init(managedAsyncStream: { writer in
            for try await chunk in body {
                try await writer.writeBuffer(allocator.buffer(bytes: chunk))
            }
        }, count: count, byteBufferAllocator: allocator))
    }
}
#endif  // Vapor
