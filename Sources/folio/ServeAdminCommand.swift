import ArgumentParser
import FolioClient
import FolioCore
import FolioServer
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `folio serve admin …`: a library's admin API (docs/protocol.md, "Admin API") from the command line, against a
/// running server, with a token that has the admin role of the library.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract:
            "Manage a library on a running server: its sessions, shares, users, tokens, and whether it is online.",
        discussion: """
            Needs a token with the admin role of the library (`folio serve token create --role admin`, or an app \
            token or share with that role), read from --token-file or the FOLIO_ADMIN_TOKEN environment variable. \
            Prints tab-separated lines, or the API's JSON with --json.
            """,
        subcommands: [
            Status.self, Offline.self, Online.self, Sessions.self, Kick.self, Shares.self, Share.self, Unshare.self,
            Users.self, Tokens.self, Issue.self, Revoke.self,
        ]
    )

    /// What every admin subcommand takes: the server, the library, the token and the output.
    struct Options: ParsableArguments {
        @Option(help: "The server's address.")
        var server = "http://127.0.0.1:8080"

        @Option(help: "The library to manage.")
        var library: String

        @Option(help: "A file holding the admin token (else FOLIO_ADMIN_TOKEN).")
        var tokenFile: String?

        @Flag(help: "Print the API's JSON instead of tab-separated lines.")
        var json = false

        @Flag(help: "Send the token unencrypted (http://) to a host other than this machine.")
        var allowCleartext = false

        func validate() throws {
            guard AccountNames.isValid(library) else { throw ValidationError("--library is not a valid name") }
            guard let url = URL(string: server), let scheme = url.scheme, ["http", "https"].contains(scheme),
                let host = url.host, !host.isEmpty
            else { throw ValidationError("--server must be an http:// or https:// address") }
            guard scheme == "https" || allowCleartext || ServerEndpoint.isLoopback(host) else {
                throw ValidationError(
                    "--server is http:// to another machine: the token would cross the network unencrypted (use https://, or --allow-cleartext)"
                )
            }
        }

        /// The admin token.
        func token() throws -> String {
            let raw: String
            if let tokenFile {
                do { raw = try String(contentsOfFile: tokenFile, encoding: .utf8) } catch {
                    throw ValidationError("cannot read --token-file \(tokenFile): \(error.localizedDescription)")
                }
            } else if let value = ProcessInfo.processInfo.environment["FOLIO_ADMIN_TOKEN"] {
                raw = value
            } else {
                throw ValidationError("give the admin token with --token-file or FOLIO_ADMIN_TOKEN")
            }
            let token = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty, token.utf8.count <= 16_384 else { throw ValidationError("the admin token is empty") }
            return token
        }

        /// Sends `method` to `path` under the library's admin address with `body`, and decodes the answer as `T`; a
        /// refusal or failure is thrown with the server's reason. With `--json`, prints the answer's JSON as it came.
        func call<T: Decodable>(
            _ method: String, _ path: String = "", body: (some Encodable)? = String?.none, as type: T.Type
        ) async throws -> T? {
            let escaped = library.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? library
            var base = server
            while base.hasSuffix("/") { base.removeLast() }
            guard let url = URL(string: "\(base)/v1/libraries/\(escaped)/admin\(path)") else {
                throw ValidationError("the address \(base) does not make a valid URL")
            }
            var request = URLRequest(url: url, timeoutInterval: 30)
            request.httpMethod = method
            request.setValue("Bearer \(try token())", forHTTPHeaderField: "Authorization")
            if let body {
                request.httpBody = try AdminAPI.encoder.encode(body)
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            let data: Data
            let response: URLResponse
            do { (data, response) = try await URLSession.shared.data(for: request) } catch {
                throw CommandFailure.checkFailed("cannot reach \(base): \(error.localizedDescription)")
            }
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard (200..<300).contains(status) else {
                let reason =
                    (try? AdminAPI.decoder.decode(AdminAPI.Failure.self, from: data))?.error
                    ?? String(decoding: data.prefix(500), as: UTF8.self)
                throw CommandFailure.checkFailed("the server refused (\(status)): \(TerminalText.escaped(reason))")
            }
            if json, !data.isEmpty { print(TerminalText.escaped(String(decoding: data, as: UTF8.self))) }
            guard !data.isEmpty else { return nil }
            do { return try AdminAPI.decoder.decode(T.self, from: data) } catch {
                throw CommandFailure.checkFailed("the server's answer does not decode: \(error)")
            }
        }
    }

    /// `text` as one path component: every byte but ASCII letters, digits and `-_~` percent-encoded (RFC 3986; `.` too,
    /// so that a subject `.` or `..` is not taken for a dot segment).
    static func pathComponent(_ text: String) -> String {
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_~")
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// Refuses a `--document` that is not a document's identity, before anything is sent.
    static func check(document: String?) throws {
        guard let document, DocumentID(document) == nil else { return }
        throw ValidationError("--document takes a document's identity, such as 6ba7b810-9dad-11d1-80b4-00c04fd430c8")
    }

    /// A date as the lines print it (ISO 8601, UTC).
    static func date(_ date: Date) -> String { date.ISO8601Format() }

    static func printStatus(_ status: AdminAPI.Status?, _ options: Options) {
        guard let status, !options.json else { return }
        let state = status.offlineSince.map { "offline since \(date($0))" } ?? "online"
        print("library\tstate\tsessions\tshares")
        print("\(status.library)\t\(state)\t\(status.sessions)\t\(status.shares)")
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Whether the library is online, and its counts.")
        @OptionGroup var options: Options
        func run() async throws {
            printStatus(try await options.call("GET", as: AdminAPI.Status.self), options)
        }
    }

    struct Offline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take the library offline: its connections close (4503) and new ones are refused.")
        @OptionGroup var options: Options
        func run() async throws {
            printStatus(try await options.call("POST", "/offline", as: AdminAPI.Status.self), options)
        }
    }

    struct Online: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bring the library back online.")
        @OptionGroup var options: Options
        func run() async throws {
            printStatus(try await options.call("POST", "/online", as: AdminAPI.Status.self), options)
        }
    }

    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the library's connections open on the server asked.")
        @OptionGroup var options: Options
        func run() async throws {
            let sessions = try await options.call("GET", "/sessions", as: [AdminAPI.Session].self) ?? []
            guard !options.json else { return }
            print("id\tgrantee\trole\tshared\taddress\topened")
            for session in sessions {
                print(
                    "\(session.id)\t\(TerminalText.escaped(session.grantee))\t\(session.role.rawValue)\t\(session.shared)\t\(session.address)\t\(date(session.opened))"
                )
            }
        }
    }

    struct Kick: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Close one session (4410); its device may connect again while its token is valid.")
        @OptionGroup var options: Options
        @Argument(help: "The session's id, as `sessions` lists it.") var id: UInt64
        func run() async throws {
            _ = try await options.call("DELETE", "/sessions/\(id)", as: AdminAPI.Status.self)
            if !options.json { print("closed session \(id)") }
        }
    }

    struct Shares: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the users the library, or single documents of it, are shared with.")
        @OptionGroup var options: Options
        func run() async throws {
            let shares = try await options.call("GET", "/shares", as: [AdminAPI.Share].self) ?? []
            guard !options.json else { return }
            print("user\tdocument\trole\tshared")
            for share in shares {
                print(
                    "\(TerminalText.escaped(share.subject))\t\(TerminalText.escaped(share.document ?? "-"))\t\(share.role.rawValue)\t\(date(share.created))"
                )
            }
        }
    }

    struct Share: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Share the library, or one document of it, with an app's user (the sub of their app tokens), or change their role."
        )
        @OptionGroup var options: Options
        @Argument(help: "The user.") var subject: String
        @Option(help: "What they may do: read, write, resolve or admin.") var role = LibraryRole.write
        @Option(help: "Share only this document (its identity), not the whole library.") var document: String?
        func validate() throws { try AdminCommand.check(document: document) }
        func run() async throws {
            _ = try await options.call(
                "PUT", "/shares", body: AdminAPI.ShareRequest(subject: subject, role: role, document: document),
                as: AdminAPI.Share.self)
            if !options.json {
                let what = document.map { "document \($0) of \(options.library)" } ?? options.library
                print("shared \(what) with \(TerminalText.escaped(subject)) (\(role.rawValue))")
            }
        }
    }

    struct Unshare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "End a share: the user's connections it opened close (4401; 4409 for a document's) and are refused what it granted from then on."
        )
        @OptionGroup var options: Options
        @Argument(help: "The user.") var subject: String
        @Option(help: "End the share of this document (its identity), not the library's.") var document: String?
        func validate() throws { try AdminCommand.check(document: document) }
        func run() async throws {
            let query = document.map { "?document=\($0)" } ?? ""
            _ = try await options.call(
                "DELETE", "/shares/\(AdminCommand.pathComponent(subject))\(query)", as: AdminAPI.Status.self)
            if !options.json {
                let what = document.map { "of document \($0) " } ?? ""
                print("ended the share \(what)with \(TerminalText.escaped(subject))")
            }
        }
    }

    struct Users: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the app's users the library is shared with or connected to.")
        @OptionGroup var options: Options
        func run() async throws {
            let users = try await options.call("GET", "/users", as: [AdminAPI.User].self) ?? []
            guard !options.json else { return }
            print("user\tshared role\tshared documents\tsessions\trevoked")
            for user in users {
                print(
                    "\(TerminalText.escaped(user.subject))\t\(user.sharedRole?.rawValue ?? "-")\t\(user.sharedDocuments ?? 0)\t\(user.sessions)\t\(user.revoked)"
                )
            }
        }
    }

    struct Tokens: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the library's tokens (never their secrets).")
        @OptionGroup var options: Options
        func run() async throws {
            let tokens = try await options.call("GET", "/tokens", as: [AdminAPI.Token].self) ?? []
            guard !options.json else { return }
            print("id\trole\tcreated\tstatus")
            for token in tokens {
                let status = token.revoked.map { "revoked \(date($0))" } ?? "valid"
                print("\(token.id)\t\(token.role.rawValue)\t\(date(token.created))\t\(status)")
            }
        }
    }

    struct Issue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a token of the library; prints its secret, shown only now.")
        @OptionGroup var options: Options
        @Option(help: "What it grants: read, write, resolve or admin.") var role = LibraryRole.write
        func run() async throws {
            let issued = try await options.call(
                "POST", "/tokens", body: AdminAPI.TokenRequest(role: role), as: AdminAPI.IssuedToken.self)
            guard let issued, !options.json else { return }
            print(issued.secret)
            FileHandle.standardError.write(Data("issued \(issued.token.id) (\(role.rawValue))\n".utf8))
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke one of the library's tokens: its connections close (4401).")
        @OptionGroup var options: Options
        @Argument(help: "The token's id, as `tokens` lists it.") var id: String
        func run() async throws {
            _ = try await options.call("DELETE", "/tokens/\(AdminCommand.pathComponent(id))", as: AdminAPI.Status.self)
            if !options.json { print("revoked \(id)") }
        }
    }
}
