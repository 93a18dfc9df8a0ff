/// What a token's `sub` (the user id every query is scoped by) may be: 1–255 Unicode
/// scalars (PostgreSQL's `char_length`, the `users.user_id` CHECK), no control character
/// (U+0000–U+001F, U+007F–U+009F: a NUL would cut the id short on its way to libpq), and not
/// blank or padded with spaces. Identity providers' subjects (`auth0|5f…`, e-mail addresses,
/// UUIDs) all fit; anything else is refused like a bad signature.
public enum SubjectRules {
    public static let maximumLength = 255

    /// Why `subject` is not acceptable, or nil when it is.
    public static func problem(_ subject: String) -> String? {
        let scalars = subject.unicodeScalars
        guard (1...maximumLength).contains(scalars.count) else { return "must be 1–\(maximumLength) characters" }
        if scalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) { return "must not contain control characters" }
        if scalars.first == " " || scalars.last == " " { return "must not start or end with a space" }
        return nil
    }
}
