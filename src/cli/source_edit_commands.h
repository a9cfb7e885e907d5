#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "command.h"
#include "postgres/source_records.h"

namespace tributary::cli {

/// `source check NAME [--json]` (docs/sources.md "Checking a source").
void add_source_check_command(CLI::App& source, const GlobalOptions& global, Action& action);
/// `source edit NAME --flag ... [--rewind-to CURSOR] [--check]` (docs/sources.md "Editing a source").
void add_source_edit_command(CLI::App& source, const GlobalOptions& global, Action& action);

/// `source add`'s checks of a name and of a pulled source's settings
/// (source_commands.cpp): UsageError naming what is wrong.
void check_source_name(const std::string& name);
void check_source_spec(const postgres::SourceSpec& spec);

}  // namespace tributary::cli
