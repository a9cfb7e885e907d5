#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "postgres/source_records.h"
#include "reading_flags.h"

namespace tributary::cli {

/// The flags of `source add` that set a pulled source's settings: where it
/// is asked and how often (--url, --header, --interval-ms, --batch-size,
/// --timeout-ms, --after-id), bound to `spec`, and ReadingFlags. Declared
/// once here for `source add` and `source edit`, so that a flag added to
/// either list reaches both commands.
struct SourceSettingsFlags {
    postgres::SourceSpec spec;
    ReadingFlags reading;

    /// Declares the flags on `command`, bound to this object's members.
    void declare(CLI::App& command);
};

/// `source edit`: the settings of a pulled source as they are stored, with
/// the flags given to `edit` (and only those) applied over them, checked as
/// `source add` checks them. `stored` is the source from the catalogue;
/// `edit` is the parsed `source edit` command, declared by
/// SourceSettingsFlags::declare. When --paginate is given, the settings
/// that belong to a style (--next, --has-more, --cursor-param, ...) start
/// from the new style's defaults unless given too. Throws UsageError for
/// flags that do not go together, and std::runtime_error when this binary
/// cannot carry a stored setting over unchanged (a newer binary wrote it).
postgres::SourceSpec edited_settings(const Source& stored, const CLI::App& edit);

/// The flags of `command` the user gave, besides NAME and those named in
/// `except`: their long names ("--url").
std::vector<std::string> given_flags(const CLI::App& command, const std::vector<std::string>& except);

}  // namespace tributary::cli
