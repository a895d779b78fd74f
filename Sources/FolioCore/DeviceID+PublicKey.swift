extension DeviceID {
    /// The identity that `publicKey` proves (see ``DevicePublicKey/deviceID``).
    public init(publicKey: DevicePublicKey) {
        self = publicKey.deviceID
    }
}
