// `tributary shard`: the log's shards on Citus, each a lane, and moving one
// to another worker without any lane skipping an event (docs/citus.md
// "Moving a shard"; the steps and why they are safe:
// sql/internal/17_shard_moves.sql).

#include <chrono>
#include <iostream>
#include <thread>

#include "aligned_table.h"
#include "command.h"
#include "metrics/metrics_server.h"
#include "postgres/postgres_session.h"
#include "postgres/postgres_shard_moves.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

using Clock = std::chrono::steady_clock;

long long ms_since(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

int list(const GlobalOptions& global) {
    postgres::PostgresSession session(global.database_url());
    const auto lanes = postgres::PostgresShardMoves(session).list();
    if (lanes.empty()) {
        std::cout << "the log is not distributed: one PostgreSQL, no shards\n";
        return 0;
    }
    std::vector<std::vector<std::string>> table{{"LANE", "SHARD", "WORKER", "STATE"}};
    for (const auto& l : lanes) table.push_back({std::to_string(l.lane), std::to_string(l.shard_id), l.node, l.state});
    print_aligned(table, {true, true, false, false});
    return 0;
}

/// `--to` split into host and port, as every HOST:PORT flag is.
std::pair<std::string, int> worker_address(const std::string& text) {
    try {
        return metrics::split_address(text);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--to: a worker is host:port, as pg_dist_node names it: ") + e.what());
    }
}

/// A move that failed for good: the lane is read where it is again.
void abandon(postgres::PostgresShardMoves& moves, int lane) {
    try {
        moves.abandon(lane);
    } catch (const std::exception& also) {
        // The database went away too: the lane stays marked, and the same command finishes it.
        std::cerr << "tributary: the lane stays marked moving: " << also.what() << "\n";
    }
}

/// Steps 2 and 3, tried again a few times while the move is refused for now
/// (the counter moved on again first: the source's went on meanwhile). A
/// move that fails for good leaves the shard where it was, and the lane is
/// read there again.
postgres::ShardMoveEnd advance_and_move(postgres::PostgresShardMoves& moves, const postgres::ShardMovePlan& plan,
                                        int lane) {
    constexpr int kAttempts = 5;
    for (int attempt = 1;; ++attempt) {
        auto start = Clock::now();
        const auto [source_next, target_next] = moves.prepare(lane);
        std::cout << plan.to_node << "'s transaction counter moved to " << target_next << " (" << plan.from_node
                  << "'s: " << source_next << ", " << ms_since(start) << " ms)\n";
        start = Clock::now();
        try {
            const auto done = moves.move(lane, plan.shard_id, metrics::split_address(plan.from_node),
                                         metrics::split_address(plan.to_node));
            if (done.moved) {
                std::cout << "shard group moved from " << plan.from_node << " to " << plan.to_node << " (block_writes, "
                          << ms_since(start) << " ms)\n";
                return done.end;
            }
            if (attempt == kAttempts)
                throw std::runtime_error("the move was refused " + std::to_string(kAttempts) +
                                         " times; the last: " + done.busy);
            std::cout << "the shard group cannot move now (another move, a partition of the log being made, a "
                         "writer's lock or a prepared transaction): trying again in 2 s\n  "
                      << done.busy << "\n";
            std::this_thread::sleep_for(std::chrono::seconds(2));
        } catch (const std::exception&) {
            abandon(moves, lane);
            throw;
        }
    }
}

/// The three steps, each its own transaction. Interrupted, the lane stays
/// unread until the same command is run again, which goes on from where
/// it stopped.
int move(const GlobalOptions& global, int lane, const std::string& to) {
    const auto [host, port] = worker_address(to);
    std::cout << std::unitbuf;  // each step's line as it happens, to a pipe or a log file too
    postgres::PostgresSession session(global.database_url());
    postgres::PostgresShardMoves moves(session);
    const auto plan = moves.begin(lane, host, port);
    std::cout << "lane " << lane << " (shard " << plan.shard_id << "): not read until the move ends\n";
    if (plan.already_moved) {
        std::cout << "its shard is on " << plan.to_node << " already: finishing the move begun before\n";
        const auto done = moves.end(lane);
        std::cout << "lane " << lane << " is read on " << plan.to_node << " again; its counter is at "
                  << done.target_next << "\n";
        std::cout << "note: the shard reached " << plan.to_node << " before this run, which cannot tell what it "
                  << "stored meanwhile: those events and the ones " << plan.from_node
                  << " stored last in this shard may be read out of each source's order (none is skipped)\n";
        return 0;
    }
    const auto done = advance_and_move(moves, plan, lane);
    std::cout << "lane " << lane << " is read on " << plan.to_node << " again; its counter is at " << done.target_next
              << " (" << plan.from_node << "'s: " << done.source_next << ")\n";
    return 0;
}

int adopt(const GlobalOptions& global, int lane) {
    postgres::PostgresSession session(global.database_url());
    const auto node = postgres::PostgresShardMoves(session).adopt(lane);
    if (!node) std::cout << "lane " << lane << "'s shard is where it was recorded: nothing to adopt\n";
    else
        std::cout << "lane " << lane << " is read on " << *node << " from now on (docs/citus.md says what a move "
                  << "made outside tributary may have skipped)\n";
    return 0;
}

}  // namespace

void add_shard_commands(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* shard =
        app.add_subcommand("shard", "Citus: the log's shards (a lane each), and moving one to another worker");
    shard->require_subcommand(1);

    auto* list_cmd = shard->add_subcommand("list", "One row per lane: its shard, its worker, whether it is read");
    list_cmd->callback([&global, &action] { action = [&global] { return list(global); }; });

    auto* move_cmd = shard->add_subcommand(
        "move", "Move a lane's shard group to another worker, so that no consumer group or tail skips an event");
    auto lane = std::make_shared<int>(-1);
    auto to = std::make_shared<std::string>();
    move_cmd->add_option("--lane", *lane, "the lane (`tributary shard list`)")
        ->required()
        ->check(CLI::NonNegativeNumber);
    move_cmd->add_option("--to", *to, "the worker, host:port as pg_dist_node names it")->required();
    move_cmd->callback(
        [&global, &action, lane, to] { action = [&global, lane, to] { return move(global, *lane, *to); }; });

    auto* adopt_cmd =
        shard->add_subcommand("adopt", "Read a lane again on the worker its shard was moved to outside tributary");
    auto adopt_lane = std::make_shared<int>(-1);
    adopt_cmd->add_option("--lane", *adopt_lane, "the lane")->required()->check(CLI::NonNegativeNumber);
    adopt_cmd->callback(
        [&global, &action, adopt_lane] { action = [&global, adopt_lane] { return adopt(global, *adopt_lane); }; });
}

}  // namespace tributary::cli
