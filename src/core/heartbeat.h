#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "group_log.h"
#include "outage_log.h"

namespace tributary {

/// Keeps the leases of the batches in hand alive while their handlers run:
/// one thread, on a GroupLog (database session) of its own so that a slow
/// read or ack of a worker never delays it, extends each batch every
/// `lease / 3` (two heartbeats may fail before a lease runs out).
class Heartbeat {
public:
    using time_point = std::chrono::steady_clock::time_point;

    /// A batch extended while the ticket lives. Move-only.
    class Ticket {
    public:
        Ticket(Heartbeat& heartbeat, std::uint64_t key) : heartbeat_(&heartbeat), key_(key) {}
        Ticket(Ticket&& other) noexcept : heartbeat_(other.heartbeat_), key_(other.key_) { other.heartbeat_ = nullptr; }
        Ticket(const Ticket&) = delete;
        Ticket& operator=(const Ticket&) = delete;
        Ticket& operator=(Ticket&&) = delete;
        ~Ticket();

        /// An extend was refused: another consumer holds the batch now.
        bool lost() const;
        /// When the lease ends at the earliest, as far as this process knows
        /// (the database's clock starts it a little later).
        time_point lease_ends() const;

    private:
        Heartbeat* heartbeat_;
        std::uint64_t key_;
    };

    /// `context` starts every log line ("group=... consumer=...").
    Heartbeat(std::unique_ptr<GroupLog> log, std::chrono::milliseconds lease, std::string context, OutageLog& outages);
    ~Heartbeat();
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

    /// Starts extending `batch`, leased by a read that began at `read_started`.
    Ticket track(const LeasedBatch& batch, time_point read_started);

    std::chrono::milliseconds every() const { return every_; }

private:
    struct Entry {
        std::int64_t batch_id;
        std::string token;
        time_point next_due;
        time_point lease_ends;
        bool lost = false;
    };
    enum class Extended { yes, lost, unknown };
    struct Due {
        std::uint64_t key;
        std::int64_t batch_id;
        std::string token;
    };

    void loop();
    Extended extend(std::int64_t batch_id, const std::string& token);
    void untrack(std::uint64_t key);

    std::unique_ptr<GroupLog> log_;
    const std::chrono::milliseconds lease_;
    const std::chrono::milliseconds every_;
    const std::string context_;
    OutageLog& outages_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    /// By ticket, not by batch id: after a takeover within this process (a
    /// lease lost during an outage) two tickets may name the same batch.
    std::map<std::uint64_t, Entry> entries_;
    std::uint64_t next_key_ = 0;
    bool closing_ = false;
    std::thread thread_;
};

}  // namespace tributary
