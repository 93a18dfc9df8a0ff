import Foundation
import HabitSyncDomain
import LibPQClient

/// How one collection's records map onto its table's data columns. The set-based statements
/// of `SyncTableSQL` are generated from this, so each collection's SQL has the same shape.
struct SyncTable: Sendable {
    struct Column: Sendable {
        let name: PGFragment
        /// The SQL type the text value is cast to.
        let type: PGFragment
    }

    let collection: SyncCollection
    let columns: [Column]
    /// The record's values as text, in `columns` order.
    let values: @Sendable (ValidatedRecord) -> [String?]

    var table: PGFragment { .identifier(collection.table) }

    static func columns(_ pairs: [(PGFragment, PGFragment)]) -> [Column] { pairs.map { Column(name: $0.0, type: $0.1) } }

    static let habits = SyncTable(
        collection: .habits,
        columns: columns([
            ("name", "text"), ("habit_description", "text"), ("icon", "text"), ("color", "text"), ("habit_type", "text"),
            ("goal_count", "int4"), ("goal_unit", "text"), ("schedule_type", "text"), ("schedule_n", "int4"),
            ("schedule_weekdays", "text[]"), ("baseline_count", "int4"), ("baseline_unit", "text"), ("start_date", "date"),
            ("end_date", "date"), ("created_at", "timestamptz"),
        ])
    ) { record in
        guard case .habit(let h) = record else { return [] }
        return [
            h.name, h.habitDescription, h.icon, h.color, h.habitType, SQLText.int(h.goalCount), h.goalUnit, h.schedule.type,
            SQLText.int(h.schedule.n), SQLText.array(h.schedule.weekdays?.map(\.rawValue)), SQLText.int(h.baselineCount),
            h.baselineUnit, SQLText.date(h.startDate), SQLText.date(h.endDate), SQLText.timestamp(h.createdAt),
        ]
    }

    static let reminders = SyncTable(
        collection: .reminders,
        columns: columns([
            ("habit_id", "uuid"), ("time_of_day", "time"), ("is_active", "bool"), ("notification_identifier", "text"),
        ])
    ) { record in
        guard case .reminder(let r) = record else { return [] }
        return [SQLText.uuid(r.habitId), r.time, SQLText.bool(r.isActive), r.notificationIdentifier]
    }

    static let dailyProgress = SyncTable(
        collection: .dailyProgress,
        columns: columns([
            ("habit_id", "uuid"), ("date", "date"), ("progress_count", "int4"), ("goal_count", "int4"), ("timestamps", "timestamptz[]"),
            ("difficulty", "int2"), ("skip_reason", "text"), ("skip_note", "text"),
        ])
    ) { record in
        guard case .dailyProgress(let p) = record else { return [] }
        return [
            SQLText.uuid(p.habitId), SQLText.date(p.date), SQLText.int(p.progressCount), SQLText.int(p.goalCount),
            SQLText.array(p.timestamps.map(WireTime.format)), SQLText.int(p.difficulty), p.skipReason, p.skipNote,
        ]
    }

    static let focusSessions = SyncTable(
        collection: .focusSessions,
        columns: columns([
            ("start_time", "timestamptz"), ("end_time", "timestamptz"), ("state", "text"), ("duration", "float8"),
            ("paused_duration", "float8"), ("created_at", "timestamptz"),
        ])
    ) { record in
        guard case .focusSession(let f) = record else { return [] }
        return [
            SQLText.timestamp(f.startTime), SQLText.timestamp(f.endTime), f.state, SQLText.double(f.duration),
            SQLText.double(f.pausedDuration), SQLText.timestamp(f.createdAt),
        ]
    }

    static let selectedApps = SyncTable(
        collection: .selectedApps,
        columns: columns([
            ("app_name", "text"), ("icon_name", "text"), ("url_scheme", "text"), ("is_installed", "bool"), ("date_added", "timestamptz"),
            ("order_index", "int4"),
        ])
    ) { record in
        guard case .selectedApp(let s) = record else { return [] }
        return [s.appName, s.iconName, s.urlScheme, SQLText.bool(s.isInstalled), SQLText.timestamp(s.dateAdded), SQLText.int(s.orderIndex)]
    }

    static let userSettings = SyncTable(
        collection: .userSettings,
        columns: columns([
            ("timezone", "text"), ("gateway_timer_duration", "int4"), ("onboarding_determination_level", "int4"),
            ("selected_interest_tags", "text[]"), ("fre_phase", "text"), ("has_completed_onboarding", "bool"),
        ])
    ) { record in
        guard case .userSettings(let s) = record else { return [] }
        return [
            s.timezone, SQLText.int(s.gatewayTimerDuration), SQLText.int(s.onboardingDeterminationLevel),
            SQLText.array(s.selectedInterestTags), s.frePhase, SQLText.bool(s.hasCompletedOnboarding),
        ]
    }

    static let xpTransactions = SyncTable(
        collection: .xpTransactions,
        columns: columns([
            ("amount", "int4"), ("reason", "text"), ("occurred_at", "timestamptz"), ("date", "date"),
        ])
    ) { record in
        guard case .xpTransaction(let x) = record else { return [] }
        return [SQLText.int(x.amount), x.reason, SQLText.timestamp(x.timestamp), SQLText.date(x.date)]
    }

    static let usageEvents = SyncTable(
        collection: .usageEvents,
        columns: columns([
            ("event_type", "text"), ("occurred_at", "timestamptz"), ("target_app_name", "text"), ("pause_duration", "float8"),
            ("timer_duration", "float8"),
        ])
    ) { record in
        guard case .usageEvent(let e) = record else { return [] }
        return [e.eventType, SQLText.timestamp(e.timestamp), e.targetAppName, SQLText.double(e.pauseDuration), SQLText.double(e.timerDuration)]
    }

    static let achievements = SyncTable(
        collection: .achievements,
        columns: columns([
            ("achievement_id", "text"), ("title", "text"), ("description", "text"), ("unlocked_at", "timestamptz"), ("xp_awarded", "int4"),
        ])
    ) { record in
        guard case .achievement(let a) = record else { return [] }
        return [a.achievementId, a.title, a.description, SQLText.timestamp(a.unlockedAt), SQLText.int(a.xpAwarded)]
    }
}
