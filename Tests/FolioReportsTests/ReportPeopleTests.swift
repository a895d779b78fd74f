import FolioCore
import FolioReports
import FolioTesting
import Testing

/// How a report names devices whose persons are known.
@Suite struct ReportPeopleTests {
    /// A device is named with its person (`Anna on iPad`), or by the person alone when it has no name; two devices
    /// that would share a name get their identity's first digits; the person is a field of its own, left out when
    /// unknown.
    @Test func devicesAreNamedWithTheirPersons() {
        let first = Device(id: Device.named("First").id, name: "iPad", person: "Anna")
        let second = Device(id: Device.named("Second").id, name: "iPad", person: "Anna")
        let ben = Device(id: Device.named("Ben").id, name: "", person: "Ben")
        let mac = Device(id: Device.named("Mac").id, name: "Mac")
        let assembler = ReportAssembler(captures: [], devices: [first, second, ben, mac])
        let named = assembler.devices.map { ($0.name, $0.person) }
        #expect(
            named.map(\.0) == [
                "Anna on iPad (\(first.id.uuid.description.prefix(8)))",
                "Anna on iPad (\(second.id.uuid.description.prefix(8)))", "Ben", "Mac",
            ])
        #expect(named.map(\.1) == ["Anna", "Anna", "Ben", nil])
        #expect(assembler.name(of: ben.id) == "Ben")
    }
}
