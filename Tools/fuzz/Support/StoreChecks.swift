import FolioCore
import FolioStore
import Foundation

/// What every harness that feeds outside bytes to a store requires of it afterwards.
enum StoreChecks {
    /// `verify()` finds nothing wrong.
    static func requireSound(_ store: ChangeLogStore, _ context: String) {
        do {
            let report = try store.verify(checkingPages: false)
            require(report.isSound, "\(context): verify() is not sound: \(report)")
        } catch {
            oracleFailed("\(context): verify() could not read the store: \(error)")
        }
    }

    /// A local edit can be appended to every document the store holds, and the store stays sound.
    static func requireAppendWorks(_ store: ChangeLogStore, _ context: String) {
        let documents: [DocumentID]
        do {
            documents = try store.documents()
        } catch {
            oracleFailed("\(context): documents() failed: \(error)")
        }
        for document in documents {
            do {
                try store.append(.edit(Edit(operations: Data([0]))), to: document)
            } catch {
                oracleFailed("\(context): a local append to document \(document) failed: \(error)")
            }
        }
        requireSound(store, "\(context), after a local append")
    }

    /// The two stores hold the same changes of every document.
    static func requireConverged(_ stores: [ChangeLogStore], _ context: String) {
        do {
            let reference = try summary(of: stores[0])
            for store in stores.dropFirst() {
                let other = try summary(of: store)
                require(
                    other == reference,
                    "\(context): \(store.localDevice.id) holds \(other), \(stores[0].localDevice.id) holds \(reference)"
                )
            }
        } catch {
            oracleFailed("\(context): reading the stores' vectors failed: \(error)")
        }
    }

    private static func summary(of store: ChangeLogStore) throws -> [String] {
        try store.summaries().filter { !$0.vector.isEmpty }.map {
            "\($0.document): \($0.vector) \($0.heads.map(\.shortHex))"
        }
    }
}
