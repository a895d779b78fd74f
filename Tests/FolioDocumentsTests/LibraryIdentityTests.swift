import FolioCore
import FolioDocuments
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A library remembers the device it is: an app that passes no key is the same device at every launch.
@Suite(.workPool) struct LibraryIdentityTests {
    @Test func aLibraryOpenedWithoutAKeyIsTheDeviceItWasBefore() throws {
        let directory = try TemporaryDirectory()
        let root = directory.file("Library")
        let first = try DocumentLibrary(at: root, deviceName: "Anna's iPad", backgroundWork: false)
        let device = first.device
        try first.store.close()

        let again = try DocumentLibrary(at: root, backgroundWork: false)
        #expect(again.device == device, "the same key, and the name kept with it")
        let others = try again.store.devices.all().filter { $0.id != device.id && $0.id != again.externalDevice.id }
        #expect(others.isEmpty, "no second device registered: \(others)")
        try again.store.close()

        // A library given another key becomes that device; the one it was first opened as stays its identity.
        let other = DeviceKey()
        let renamed = try DocumentLibrary(at: root, key: other, deviceName: "Mac", backgroundWork: false)
        #expect(renamed.device.id == other.id)
        try renamed.store.close()
        #expect(
            try DeviceRegistry.localIdentity(ofStoreAt: root.appendingPathComponent(".folio/store.sqlite"))?.key.id
                == device.id)
    }
}
