#include "postgres_shard_moves.h"

#include "api_call.h"
#include "postgres/statements.h"

namespace tributary::postgres {

namespace {

namespace sql = statements::shard_moves;

/// Citus refuses a move while another one, or a co-located table's creation,
/// holds its lock (shard_transfer.c raises that without a SQLSTATE of its
/// own); 55P03 is lock_timeout's, waiting for a writer's long transaction,
/// and shard_move_block's, for a prepared transaction not settled yet.
bool refused_for_now(const pqxx::sql_error& e) {
    return e.sqlstate() == "55P03" || std::string(e.what()).find("concurrent shard move") != std::string::npos;
}

}  // namespace

std::vector<ShardLane> PostgresShardMoves::list() {
    return api_call(session_, [](pqxx::nontransaction& tx) {
        std::vector<ShardLane> lanes;
        for (const auto& r : tx.exec(sql::list))
            lanes.push_back({r[0].as<int>(), r[1].as<std::int64_t>(), r[2].as<std::string>(), r[3].as<std::string>()});
        return lanes;
    });
}

ShardMovePlan PostgresShardMoves::begin(int lane, const std::string& host, int port) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        const auto r = tx.exec_params1(sql::move_begin, lane, host, port);
        return ShardMovePlan{r[0].as<std::int64_t>(), r[1].as<std::string>(""), r[2].as<std::string>(""),
                             r[3].as<bool>()};
    });
}

std::pair<std::string, std::string> PostgresShardMoves::prepare(int lane) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        const auto r = tx.exec_params1(sql::move_prepare, lane);
        return std::make_pair(r[0].as<std::string>(), r[1].as<std::string>());
    });
}

PlacementMove PostgresShardMoves::move(int lane, std::int64_t shard_id, const std::pair<std::string, int>& from,
                                       const std::pair<std::string, int>& to) {
    try {
        return session_.run([&](pqxx::connection& c) {
            pqxx::work tx(c);
            tx.exec_params(sql::move_block, lane);
            tx.exec_params(sql::move_placement, shard_id, from.first, from.second, to.first, to.second);
            const auto r = tx.exec_params1(sql::move_end, lane);
            PlacementMove done{true, {}, {r[0].as<std::string>(), r[1].as<std::string>()}};
            tx.commit();
            return done;
        });
    } catch (const pqxx::sql_error& e) {
        if (refused_for_now(e)) return {false, server_message(e), {}};
        throw_api_error(e);
    }
}

void PostgresShardMoves::abandon(int lane) {
    api_call(session_, [&](pqxx::nontransaction& tx) {
        tx.exec_params(sql::move_abandon, lane);
        return 0;
    });
}

ShardMoveEnd PostgresShardMoves::end(int lane) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        const auto r = tx.exec_params1(sql::move_end, lane);
        return ShardMoveEnd{r[0].as<std::string>(), r[1].as<std::string>()};
    });
}

std::optional<std::string> PostgresShardMoves::adopt(int lane) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        const auto r = tx.exec_params1(sql::adopt, lane);
        return r[0].is_null() ? std::nullopt : std::optional<std::string>(r[0].as<std::string>());
    });
}

}  // namespace tributary::postgres
