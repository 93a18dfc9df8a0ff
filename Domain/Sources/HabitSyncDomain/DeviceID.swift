/// A device id's form, wherever a request names one (the `X-Device-Id` header, the push-token
/// path): 1–100 printable characters, counted as the tables' `char_length` checks count them
/// (Unicode scalars). Whether a device may use it is `ServerDevice.isReserved`'s question.
public enum DeviceID {
    public static func isWellFormed(_ value: String) -> Bool {
        (1...100).contains(value.unicodeScalars.count) && TextRules.firstControlCharacter(in: value) == nil
    }
}
