import FolioCore
import Foundation
import Testing

/// The compact run encoding refuses what hostile bytes say with an error, never a trap.
@Suite struct ChangeRunCodecTests {
    /// A parent whose vector names a later change of the device than the one made on it (here an outside stamp a
    /// reader was handed) predicts a vector that does not name that change: the run does not decode.
    @Test func aParentNamingALaterChangeOfItsDeviceIsRefused() throws {
        var history = HistoryBuilder()
        let first = history.append(device: 0, parents: [])
        let second = history.append(device: 0, parents: [0])
        let document = TestDevices.document
        let bytes = try ChangeRunCodec.encode([second], of: document) { $0 == first.hash ? ChangeStamp(first) : nil }
        let honest = try ChangeRunCodec.decode(bytes, document: document) { $0 == first.id ? ChangeStamp(first) : nil }
        #expect(honest.map(\.hash) == [second.hash])

        var forged = ChangeStamp(first)
        forged.vector = VersionVector([(first.id.device, UInt64(5))])
        var refusal: CodecError?
        do throws(CodecError) {
            _ = try ChangeRunCodec.decode(bytes, document: document) { $0 == first.id ? forged : nil }
        } catch {
            refusal = error
        }
        #expect(refusal?.code == .invalidValue)
        #expect("\(refusal.map { String(describing: $0) } ?? "")".contains("later change of its device"))
    }
}
