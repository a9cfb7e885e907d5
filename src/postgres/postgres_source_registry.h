#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cursor.h"

#include "core/source_catalog.h"
#include "postgres_session.h"
#include "source_records.h"

namespace tributary::postgres {

/// `tributary.sources` and the rows that go with each source (cursor, gate).
/// The loader reads it through SourceCatalog; the CLI administers it.
class PostgresSourceRegistry : public SourceCatalog {
public:
    /// A source of that name exists already, or none does.
    class NameError : public std::runtime_error {
    public:
        using std::runtime_error::runtime_error;
    };

    explicit PostgresSourceRegistry(PostgresSession& session);

    SourceSchedule schedule(const ScheduleShare& share) override;

    /// Registers a source with its cursor at `spec.after_id`; returns its id.
    int add(const SourceSpec& spec);
    std::vector<SourceRecord> list();
    /// Moves a source's cursor back to `to` (an id for a source keyed by id,
    /// a position for any other; an id after the cursor is refused: it would
    /// skip events) and records who did it; returns the cursor it left, as
    /// text. Throws NameError for no such source, InvalidRequest for
    /// a `to` the source cannot take.
    std::string rewind(const std::string& name, const std::string& to);
    /// What `source edit` did: the settings it changed (none: nothing was
    /// done), the cursor a rewind left, the source's revision after it.
    struct Edit {
        std::vector<std::string> changed;
        std::optional<std::string> rewound_from;
        std::int64_t revision = 0;
    };
    /// Gives pulled source `name` the settings of `spec` (all of them: url,
    /// headers, timing, reading) and, with `rewind_to`, moves its cursor
    /// there, as tributary.source_edit rules (sql/api/86_source_edit.sql):
    /// waits for a loader's turn at it to end, records the edit and tells
    /// the loaders. Throws InvalidRequest for a change refused or one that
    /// needs a rewind given without, NameError for no such source.
    Edit edit(const std::string& name, const SourceSpec& spec, const std::optional<std::string>& rewind_to);
    /// The cursor of pulled source `name`, read only (`source check`):
    /// nothing for no such source or one nobody asks.
    std::optional<Cursor> cursor(const std::string& name, bool keyed_by_id);
    /// Throws NameError when there is no such source.
    void set_enabled(const std::string& name, bool enabled);
    /// Removes a source that never stored an event. Events are never deleted
    /// by tributary, so a source with events is refused (pause it instead).
    void remove(const std::string& name);
    std::vector<SourceStatus> status();
    /// The source says it has new events: ask it as soon as its gate allows
    /// (see kNudgeSql), and wake the loaders. false: no source of that name.
    bool nudge(const std::string& name);
    /// Makes every source that waits out an idle pause due as soon as its
    /// gate allows (for `run --until-idle`); returns how many.
    std::size_t wake_idle_sources();

private:
    PostgresSession& session_;
};

}  // namespace tributary::postgres
