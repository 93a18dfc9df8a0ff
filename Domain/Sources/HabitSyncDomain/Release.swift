/// The release this source is: `habitsync-server --version` and `habitsync-device --version`
/// print it, and a release is tagged with it, which is the version an app names when it adds
/// the SDK (`docs/client.md`). Raise it with the tag.
public enum Release {
    public static let version = "1.0.0"
}
