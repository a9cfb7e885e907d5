#include "log_metrics_refresher.h"

#include <optional>

#include <spdlog/spdlog.h>

#include "postgres/postgres_log_status.h"
#include "postgres/postgres_session.h"

namespace tributary::cli {

LogMetricsRefresher::LogMetricsRefresher(std::string db, metrics::LogMetrics& metrics)
    : db_(std::move(db)), metrics_(metrics), thread_([this] { run(); }) {}

LogMetricsRefresher::~LogMetricsRefresher() {
    stop_.request_stop();
    if (thread_.joinable()) thread_.join();
}

void LogMetricsRefresher::run() {
    std::optional<postgres::PostgresSession> session;
    bool failing = false;
    do {
        try {
            if (!session) session.emplace(db_);
            metrics_.update(postgres::PostgresLogStatus(*session).status());
            if (failing) spdlog::info("log metrics: refreshed again");
            failing = false;
        } catch (const std::exception& e) {
            if (!failing)
                spdlog::warn("log metrics: cannot read the log's status (keeping the last figures): {}", e.what());
            failing = true;
            session.reset();  // a new session next time
        }
    } while (!stop_.wait_for(kLogMetricsRefresh));
}

}  // namespace tributary::cli
