import Foundation

/// The old app's colours: `{red, green, blue, alpha}` components, or a pre-2025 hex string.
public enum LegacyColor {
    /// `red == -1` is the app's sentinel for its navy brand colour (appPrimary).
    public static let navy = "#1B2A4EFF"

    public static func hex(_ value: JSONValue) -> String? {
        switch value {
        case .object(let fields):
            guard case .number(let red)? = fields["red"], case .number(let green)? = fields["green"], case .number(let blue)? = fields["blue"] else { return nil }
            if red == -1 { return navy }
            var alpha = 1.0
            if case .number(let a)? = fields["alpha"] { alpha = a }
            let components = [red, green, blue, alpha]
            guard components.allSatisfy({ (0...1).contains($0) }) else { return nil }
            return "#" + components.map { String(format: "%02X", Int(($0 * 255).rounded())) }.joined()
        case .string(let text):
            var hex = text.hasPrefix("#") ? String(text.dropFirst()) : text
            guard hex.allSatisfy(\.isHexDigit) else { return nil }
            switch hex.count {
            case 3: hex = hex.map { "\($0)\($0)" }.joined() + "FF"
            case 6: hex += "FF"
            case 8: break
            default: return nil
            }
            return "#" + hex.uppercased()
        default:
            return nil
        }
    }
}
