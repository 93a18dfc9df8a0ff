/// The device name the server writes under: cascaded deletes, abandoned focus sessions,
/// completion awards and the derived records carry it in `updatedBy`, and the realtime notice of
/// a change the server made names it. No device may take it (`isReserved`), so a server write is
/// never mistaken for a device's, and LWW ties against it break the same way everywhere.
/// (PostgreSQL's column comments name it too; `ServerDeviceTests` checks they agree.)
public enum ServerDevice {
    public static let name = "server"

    /// A device id no device may use: the server's own name, in any letter case.
    public static func isReserved(_ deviceID: String) -> Bool { deviceID.lowercased() == name }
}
