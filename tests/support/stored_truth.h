#pragma once

#include <string>
#include <vector>

#include "support/source_server.h"
#include "support/test_database.h"

namespace tributary::testing {

/// How a source reads the records of the server's truth: where its key and its payload are.
struct RecordShape {
    std::vector<std::string> keys{"/key"};  ///< --key pointers; several make a composite key
    std::string payload = "/payload";       ///< --payload pointer; "" = the whole record
};

/// What one source holds compared with `/_truth/SERVER_SOURCE?style=STYLE`.
struct TruthComparison {
    long long truth = 0;          ///< records the server served
    long long stored = 0;         ///< rows of the source in tributary.events
    long long distinct_keys = 0;  ///< distinct event_key among them
    long long matching = 0;       ///< truth records stored under their key with an equal payload (jsonb)
};

/// Compares the stored events of source `name` with the server's truth of `server_source` as the
/// route of `style` serves it; payloads are compared by PostgreSQL as jsonb, so the truth's
/// bytes are what is compared, not a re-encoding of them.
TruthComparison compare_with_truth(const TestDatabase& db, const SourceServer& server, const std::string& name,
                                   const std::string& server_source, const std::string& style,
                                   const RecordShape& shape = {});

/// Every record of the truth is stored once under its key with its payload, and nothing else is.
void check_stored_exactly_once(const TestDatabase& db, const SourceServer& server, const std::string& name,
                               const std::string& server_source, const std::string& style,
                               const RecordShape& shape = {});

/// The key of a record as tributary stores it in event_key: a string's text, an integer's
/// digits, or a composite key's JSON array without spaces.
std::string stored_key_text(const nlohmann::json& record, const std::vector<std::string>& key_pointers);

}  // namespace tributary::testing
