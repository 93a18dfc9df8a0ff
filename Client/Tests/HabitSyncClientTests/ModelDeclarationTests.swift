import Foundation
import HabitSyncDomain
import Testing

@testable import HabitSyncClient

/// The SDK's typed models are written by hand beside the domain's records; this holds each one
/// to its collection's field declarations (`RecordFields`) and to the record the server
/// validates, field by field: the same names, the same wire types (a model's string-valued enum
/// is the record's string), the same optionality (or optional in the model where the wire may
/// leave the field out for the server's default), and what the model encodes validates as the
/// record it mirrors. A field added to a declaration and not to the model (or the other way
/// round) fails here, not on a device.
@Suite struct ModelDeclarationTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let day = LocalDate(year: 2026, month: 11, day: 17) ?? LocalDate(dayNumber: 0)

    /// One instance of every writable model, each with its optional fields set.
    static let models: [any WritableModel] = [
        Habit(
            name: "Quit sugar", habitDescription: "d", icon: "i", color: "#FFAA00", habitType: .breaking, goalCount: 2, goalUnit: "snacks",
            schedule: .specificWeekdays([.monday]), baselineCount: 5, baselineUnit: "snacks", startDate: day, endDate: day.adding(days: 30),
            createdAt: now, sortOrder: 1),
        Reminder(habitId: UUID(), time: "07:30", notificationIdentifier: "n-1"),
        DailyProgress(
            habitId: UUID(), date: day, progressCount: 3, goalCount: 2, timestamps: [now], difficulty: 4, skipReason: .travel, skipNote: "train"),
        XPTransaction(amount: 20, reason: "bonus", timestamp: now, date: day),
        Achievement(achievementId: "first-week", title: "First week", unlockedAt: now, xpAwarded: 100),
        FocusSession(startTime: now.addingTimeInterval(-600), endTime: now, state: .completed, duration: 600, pausedDuration: 12.5),
        UsageEvent(eventType: .proceedToApp, timestamp: now, targetAppName: "Instagram", pauseDuration: 5, timerDuration: 30),
        SelectedApp(appName: "Instagram", iconName: "camera", urlScheme: "instagram://", dateAdded: now, orderIndex: 0),
        UserSettings(timezone: "Europe/Berlin", gatewayTimerDuration: 20, frePhase: .phase1Complete),
    ]

    @Test func everyPushedCollectionHasAModel() {
        let modelled = Set(Self.models.map { type(of: $0).collection })
        let declared = Set(SyncCollection.allCases.filter { RecordFields.of($0) != nil })
        #expect(modelled == declared)
    }

    @Test(arguments: models.indices)
    func aModelHasItsDeclarationsFieldsWithTheRecordsOptionalityAndTypes(_ index: Int) throws {
        let model = Self.models[index]
        let collection = type(of: model).collection
        let declared = try #require(RecordFields.of(collection)).map(\.name)

        // What the model sends validates as the record the server keeps.
        let fields = try ModelCoding.fields(model)
        let validated = try ValidatedRecord.validate(collection, fields, context: .standalone(now: Self.now.addingTimeInterval(60)))
        let record = try #require(Mirror(reflecting: validated).children.first?.value, "\(collection): no record in \(validated)")

        let modelFields = Self.fieldShapes(model)
        let recordFields = Self.fieldShapes(record)
        #expect(Set(modelFields.keys) == Set(declared), "\(collection): the model's fields against the declarations")
        #expect(Set(recordFields.keys) == Set(declared), "\(collection): the record's fields against the declarations")
        #expect(Set(fields.keys).isSubset(of: Set(declared)), "\(collection): the model encodes \(fields.keys.sorted())")
        for name in declared {
            guard let modelShape = modelFields[name], let recordShape = recordFields[name] else { continue }
            if modelShape == recordShape { continue }
            // Optional in the model where the record always holds a value: the model leaves it
            // out and the server fills in its default, which the wire must then accept.
            let defaulted = modelShape == "Optional<\(recordShape)>"
            #expect(defaulted, "\(collection).\(name): model \(modelShape), record \(recordShape)")
            if defaulted {
                var without = fields
                without[name] = nil
                #expect(throws: Never.self, "\(collection).\(name): nil in the model, but the wire requires it") {
                    try ValidatedRecord.validate(collection, without, context: .standalone(now: Self.now.addingTimeInterval(60)))
                }
            }
        }
    }

    /// Each stored property and the shape of its type on the wire.
    static func fieldShapes(_ value: Any) -> [String: String] {
        var shapes: [String: String] = [:]
        for child in Mirror(reflecting: value).children {
            guard let label = child.label else { continue }
            shapes[label] = shape(type(of: child.value))
        }
        return shapes
    }

    /// A type as the wire sees it: an enum with string raw values is a string.
    static func shape(_ type: Any.Type) -> String {
        if let optional = type as? any OptionalShape.Type { return "Optional<\(shape(optional.wrappedType))>" }
        if let array = type as? any ArrayShape.Type { return "Array<\(shape(array.elementType))>" }
        if let raw = type as? any RawRepresentable.Type, rawValueType(raw) == String.self { return "String" }
        return String(describing: type)
    }

    static func rawValueType<Value: RawRepresentable>(_: Value.Type) -> Any.Type { Value.RawValue.self }
}

protocol OptionalShape { static var wrappedType: Any.Type { get } }
extension Optional: OptionalShape { static var wrappedType: Any.Type { Wrapped.self } }

protocol ArrayShape { static var elementType: Any.Type { get } }
extension Array: ArrayShape { static var elementType: Any.Type { Element.self } }
