#include "proxy.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include <spdlog/spdlog.h>

namespace tributary::fault_proxy {
namespace {

constexpr std::size_t kReadSize = 256 * 1024;
// Per direction: how far reading may run ahead of writing (bounds memory, and throughput under
// a delay D to about kMaxQueuedBytes / D).
constexpr std::size_t kMaxQueuedBytes = 4 * 1024 * 1024;
// After a cut COMMIT, how long the server may take to run it (and whatever was pipelined
// before it) and close its side, before that side is reset too.
constexpr auto kCommitDrainTimeout = std::chrono::seconds(30);

bool would_block(int error) { return error == EAGAIN || error == EWOULDBLOCK; }

std::string errno_text(int error) { return std::strerror(error); }

void earliest(std::optional<Clock::time_point>& wake, Clock::time_point t) {
    if (!wake || t < *wake) wake = t;
}

}  // namespace

Proxy::Proxy(int listen_fd, SocketAddress target, std::string target_name)
    : listen_fd_(listen_fd), target_(target), target_name_(std::move(target_name)), buffer_(kReadSize) {}

Proxy::~Proxy() {
    for (auto& pair : pairs_) {
        if (!pair->closed) abort_pair(*pair, "proxy destroyed");
    }
    ::close(listen_fd_);
}

bool Proxy::wants_client_read(const ConnectionPair& p) const {
    if (p.up.source_eof || p.commit_cut != ConnectionPair::CommitCut::none) return false;
    return p.blackholed || p.up.queue.bytes() < kMaxQueuedBytes;
}

bool Proxy::wants_server_read(const ConnectionPair& p) const {
    if (p.server < 0 || p.connecting || p.down.source_eof) return false;
    if (p.commit_cut == ConnectionPair::CommitCut::draining) return false;
    return p.blackholed || p.down.queue.bytes() < kMaxQueuedBytes;
}

void Proxy::run(int stop_fd) {
    std::vector<pollfd> fds;
    for (;;) {
        Clock::time_point now = Clock::now();
        fds.clear();
        fds.push_back({stop_fd, POLLIN, 0});
        fds.push_back({mailbox_.fd(), POLLIN, 0});
        fds.push_back({listen_fd_, POLLIN, 0});
        std::optional<Clock::time_point> wake;

        for (auto& pair : pairs_) {
            ConnectionPair& p = *pair;
            p.client_poll = p.server_poll = -1;
            if (p.commit_cut == ConnectionPair::CommitCut::draining) {
                earliest(wake, p.drain_deadline);
                p.server_poll = static_cast<int>(fds.size());
                fds.push_back({p.server, POLLIN, 0});
                continue;
            }
            short client_events = wants_client_read(p) ? POLLIN : 0;
            short server_events = wants_server_read(p) ? POLLIN : 0;
            if (!p.blackholed && !p.down.queue.empty()) {
                if (p.down.queue.front().due <= now) {
                    client_events |= POLLOUT;
                } else {
                    earliest(wake, p.down.queue.front().due);
                }
            }
            if (p.server >= 0 && p.connecting) {
                server_events |= POLLOUT;
            } else if (p.server >= 0 && !p.blackholed && !p.up.queue.empty()) {
                if (p.up.queue.front().due <= now) {
                    server_events |= POLLOUT;
                } else {
                    earliest(wake, p.up.queue.front().due);
                }
            }
            if (client_events != 0) {
                p.client_poll = static_cast<int>(fds.size());
                fds.push_back({p.client, client_events, 0});
            }
            if (server_events != 0) {
                p.server_poll = static_cast<int>(fds.size());
                fds.push_back({p.server, server_events, 0});
            }
        }

        timespec timeout{};
        timespec* timeout_ptr = nullptr;
        if (wake) {
            auto wait = std::max(Clock::duration::zero(), *wake - now);
            auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
            timeout.tv_sec = static_cast<time_t>(ns / 1000000000);
            timeout.tv_nsec = static_cast<long>(ns % 1000000000);
            timeout_ptr = &timeout;
        }
        if (ppoll(fds.data(), fds.size(), timeout_ptr, nullptr) < 0) {
            if (errno == EINTR) continue;
            spdlog::error("poll failed: {}", errno_text(errno));
            break;
        }
        now = Clock::now();
        if (fds[0].revents != 0) break;
        if (fds[1].revents != 0) mailbox_.run_pending();
        if (fds[2].revents != 0) accept_all();

        // Pairs accepted just now were not polled (indices -1); a mailbox task may have closed some.
        for (std::size_t i = 0; i < pairs_.size(); ++i) {
            ConnectionPair& p = *pairs_[i];
            if (p.closed) continue;
            if (p.commit_cut == ConnectionPair::CommitCut::draining) {
                drain_server(p, p.server_poll >= 0 ? fds[static_cast<std::size_t>(p.server_poll)].revents : 0, now);
                continue;
            }
            constexpr short kReadable = POLLIN | POLLHUP | POLLERR;
            if (p.server_poll >= 0) {
                const short revents = fds[static_cast<std::size_t>(p.server_poll)].revents;
                if (p.connecting) {
                    if (revents != 0) finish_connect(p);
                } else if ((revents & kReadable) != 0 && wants_server_read(p)) {
                    read_server(p, now);
                }
            }
            if (!p.closed && p.client_poll >= 0 &&
                (fds[static_cast<std::size_t>(p.client_poll)].revents & kReadable) != 0 && wants_client_read(p)) {
                read_client(p, now);
            }
            // Writing is tried whenever something is due: a full socket just answers EAGAIN, an error
            // (also one poll reported as POLLERR/POLLHUP) surfaces here.
            if (!p.closed) flush(p, now);
        }
        pairs_.erase(std::remove_if(pairs_.begin(), pairs_.end(), [](const PairPtr& p) { return p->closed; }),
                     pairs_.end());
    }

    mailbox_.close();
    std::size_t open = 0;
    for (auto& pair : pairs_) {
        if (pair->closed) continue;
        abort_pair(*pair, "proxy stopping");
        ++open;
    }
    pairs_.clear();
    spdlog::info("stopping: reset {} open connection(s)", open);
}

void Proxy::accept_all() {
    for (;;) {
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (!would_block(errno)) spdlog::warn("accept failed: {}", errno_text(errno));
            return;
        }
        std::string name = peer_name(fd);
        if (refuse_) {
            abort_close(fd);
            ++counters_.refused;
            spdlog::info("fault refuse: reset new connection from {}", name);
            continue;
        }
        auto pair = std::make_unique<ConnectionPair>();
        pair->id = ++next_id_;
        pair->client = fd;
        pair->client_name = name;
        set_nodelay(fd);
        ++counters_.connections_total;
        if (blackhole_) {
            pair->blackholed = true;
            spdlog::info("fault blackhole: connection #{} from {} accepted and swallowed (no connection to {})",
                         pair->id, name, target_name_);
        } else {
            int server = start_connect(target_);
            if (server < 0) {
                spdlog::warn("connection #{} from {}: cannot connect to {}: {}", pair->id, name, target_name_,
                             errno_text(errno));
                abort_close(fd);
                continue;
            }
            set_nodelay(server);
            pair->server = server;
            pair->connecting = true;
            spdlog::debug("connection #{} from {} opened", pair->id, name);
        }
        pairs_.push_back(std::move(pair));
    }
}

void Proxy::finish_connect(ConnectionPair& p) {
    if (int error = connect_error(p.server); error != 0) {
        spdlog::warn("connection #{} from {}: cannot connect to {}: {}", p.id, p.client_name, target_name_,
                     errno_text(error));
        abort_pair(p, "connect failed");
        return;
    }
    p.connecting = false;
}

void Proxy::note_protocol_change(ConnectionPair& p, PgClientStream::Phase before) {
    if (before != PgClientStream::Phase::opaque && p.protocol.phase() == PgClientStream::Phase::opaque) {
        spdlog::info("connection #{}: {}; its COMMITs cannot be recognised", p.id, p.protocol.opaque_reason());
    }
}

void Proxy::read_client(ConnectionPair& p, Clock::time_point now) {
    ssize_t n = recv(p.client, buffer_.data(), buffer_.size(), 0);
    if (n < 0) {
        if (errno != EINTR && !would_block(errno)) abort_pair(p, "client: " + errno_text(errno));
        return;
    }
    if (n == 0) {
        p.up.source_eof = true;
        return;
    }
    if (p.blackholed) {
        counters_.bytes_swallowed += static_cast<std::uint64_t>(n);
        return;
    }
    std::size_t forward = static_cast<std::size_t>(n);
    bool cut = false;
    if (p.protocol.phase() != PgClientStream::Phase::opaque) {
        commit_ends_.clear();
        const auto before = p.protocol.phase();
        p.protocol.client_bytes(buffer_.data(), forward, commit_ends_);
        note_protocol_change(p, before);
        for (const auto& [end, statement] : commit_ends_) {
            ++counters_.commits_seen;
            if (pending_commit_cuts_ > 0 && statement.rfind(commit_cut_statement_, 0) == 0) {
                --pending_commit_cuts_;
                forward = end;  // nothing after the COMMIT is forwarded
                cut = true;
                p.commit_cut = ConnectionPair::CommitCut::armed;
                spdlog::info(
                    "fault cut-after-commit: connection #{} sent a COMMIT ({}); forwarding it, then cutting ({} "
                    "more to come)",
                    p.id, statement, pending_commit_cuts_);
                break;
            }
        }
    }
    p.up.queue.push(now + delay_, buffer_.data(), forward, cut);
}

void Proxy::read_server(ConnectionPair& p, Clock::time_point now) {
    ssize_t n = recv(p.server, buffer_.data(), buffer_.size(), 0);
    if (n < 0) {
        if (errno != EINTR && !would_block(errno)) abort_pair(p, "server: " + errno_text(errno));
        return;
    }
    if (n == 0) {
        p.down.source_eof = true;
        return;
    }
    if (p.blackholed) {
        counters_.bytes_swallowed += static_cast<std::uint64_t>(n);
        return;
    }
    const auto before = p.protocol.phase();
    p.protocol.server_bytes(buffer_.data(), static_cast<std::size_t>(n));
    note_protocol_change(p, before);
    p.down.queue.push(now + delay_, buffer_.data(), static_cast<std::size_t>(n), false);
}

void Proxy::flush(ConnectionPair& p, Clock::time_point now) {
    if (p.blackholed || p.commit_cut == ConnectionPair::CommitCut::draining) return;
    flush_flow(p, p.down, p.client, counters_.bytes_down, now);
    if (p.closed) return;
    if (p.server >= 0 && !p.connecting) flush_flow(p, p.up, p.server, counters_.bytes_up, now);
    if (p.closed || p.commit_cut == ConnectionPair::CommitCut::draining) return;
    if (p.up.destination_shut && p.down.destination_shut) close_pair(p);
}

void Proxy::flush_flow(ConnectionPair& p, Flow& flow, int fd, std::uint64_t& counter, Clock::time_point now) {
    while (!flow.queue.empty()) {
        ChunkQueue::Chunk& chunk = flow.queue.front();
        if (chunk.due > now) return;
        ssize_t n = send(fd, chunk.bytes.data() + chunk.written, chunk.bytes.size() - chunk.written, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (!would_block(errno))
                abort_pair(p, std::string(fd == p.client ? "client" : "server") + ": " + errno_text(errno));
            return;
        }
        counter += static_cast<std::uint64_t>(n);
        const bool cut_after = chunk.cut_after;
        if (flow.queue.consume(static_cast<std::size_t>(n)) && cut_after) {
            begin_commit_drain(p, now);
            return;
        }
    }
    if (flow.source_eof && !flow.destination_shut) {
        shutdown(fd, SHUT_WR);
        flow.destination_shut = true;
    }
}

void Proxy::begin_commit_drain(ConnectionPair& p, Clock::time_point now) {
    // The client is reset now: nothing read from the server from here on can reach it. The server
    // is not reset: a reset arriving while it still works through the COMMIT (or messages pipelined
    // before it) makes its next write fail and the backend exit without committing. Instead it gets
    // an end of stream right after the COMMIT, runs what it has, and closes; its answers are dropped.
    abort_close(p.client);
    p.client = -1;
    shutdown(p.server, SHUT_WR);
    p.down.queue = ChunkQueue();
    p.commit_cut = ConnectionPair::CommitCut::draining;
    p.drain_deadline = now + kCommitDrainTimeout;
    ++counters_.commit_cuts;
    spdlog::info(
        "fault cut-after-commit: connection #{}: COMMIT forwarded, client reset; the server gets an end "
        "of stream and its answer is dropped",
        p.id);
}

void Proxy::drain_server(ConnectionPair& p, short revents, Clock::time_point now) {
    if (now >= p.drain_deadline) {
        abort_close(p.server);
        p.server = -1;
        p.closed = true;
        spdlog::warn(
            "fault cut-after-commit: connection #{}: the server had not closed {} s after the COMMIT; "
            "reset it",
            p.id, std::chrono::seconds(kCommitDrainTimeout).count());
        return;
    }
    if (revents == 0) return;
    for (;;) {
        ssize_t n = recv(p.server, buffer_.data(), buffer_.size(), 0);
        if (n > 0) {
            p.bytes_discarded += static_cast<std::uint64_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && would_block(errno)) return;
        if (n == 0) {
            ::close(p.server);
        } else {
            abort_close(p.server);
        }
        p.server = -1;
        p.closed = true;
        spdlog::debug("connection #{}: server side closed after the cut COMMIT ({}; {} bytes of answers dropped)", p.id,
                      n == 0 ? "end of stream" : errno_text(errno), p.bytes_discarded);
        return;
    }
}

void Proxy::abort_pair(ConnectionPair& p, const std::string& why) {
    if (p.closed) return;
    abort_close(p.client);
    abort_close(p.server);
    p.client = p.server = -1;
    p.closed = true;
    if (p.commit_cut == ConnectionPair::CommitCut::armed) {
        ++pending_commit_cuts_;  // its COMMIT never reached the server: the cut is still owed
        spdlog::info(
            "fault cut-after-commit: connection #{} closed ({}) before its COMMIT was forwarded; "
            "{} COMMIT cut(s) pending",
            p.id, why, pending_commit_cuts_);
    }
    spdlog::debug("connection #{} from {} reset ({})", p.id, p.client_name, why);
}

void Proxy::close_pair(ConnectionPair& p) {
    ::close(p.client);
    ::close(p.server);
    p.client = p.server = -1;
    p.closed = true;
    spdlog::debug("connection #{} from {} closed", p.id, p.client_name);
}

std::size_t Proxy::cut_all() {
    std::size_t count = 0;
    for (auto& pair : pairs_) {
        if (pair->closed || pair->commit_cut == ConnectionPair::CommitCut::draining) continue;
        abort_pair(*pair, "cut");
        ++count;
    }
    counters_.cuts += count;
    spdlog::info("fault cut: reset {} connection(s)", count);
    return count;
}

void Proxy::cut_after_commits(std::int64_t count, std::string statement) {
    pending_commit_cuts_ = count;
    commit_cut_statement_ = std::move(statement);
    spdlog::info(
        "fault cut-after-commit: the next {} COMMIT(s){} will be forwarded, then their connection reset", count,
        commit_cut_statement_.empty() ? std::string() : " of a statement named " + commit_cut_statement_ + "*");
}

std::chrono::milliseconds Proxy::set_delay(std::chrono::milliseconds delay) {
    auto previous = delay_;
    delay_ = delay;
    spdlog::info("fault delay: {} ms each way (was {} ms)", delay.count(), previous.count());
    return previous;
}

std::size_t Proxy::set_blackhole(bool on) {
    std::size_t count = 0;
    if (on) {
        for (auto& pair : pairs_) {
            if (pair->closed || pair->blackholed || pair->commit_cut == ConnectionPair::CommitCut::draining) continue;
            pair->blackholed = true;
            ++count;
        }
        spdlog::info("fault blackhole on: {} more open connection(s) now swallow everything{}", count,
                     blackhole_ ? " (it was already on)" : "");
    } else {
        for (auto& pair : pairs_) {
            if (pair->closed || !pair->blackholed) continue;
            abort_pair(*pair, "blackhole ended");
            ++count;
        }
        spdlog::info("fault blackhole off: reset the {} connection(s) that were in it{}", count,
                     blackhole_ ? "" : " (it was already off)");
    }
    blackhole_ = on;
    return count;
}

void Proxy::set_refuse(bool on) {
    spdlog::info("fault refuse {}: new connections {}", on ? "on" : "off",
                 on ? "are reset as soon as they are accepted" : "are proxied");
    refuse_ = on;
}

std::size_t Proxy::heal() {
    spdlog::info("fault heal: every fault off");
    if (delay_.count() != 0) set_delay(std::chrono::milliseconds(0));
    if (refuse_) set_refuse(false);
    if (pending_commit_cuts_ != 0) cut_after_commits(0);
    return blackhole_ ? set_blackhole(false) : 0;
}

ProxyStats Proxy::stats() const {
    ProxyStats s = counters_;
    s.connections_open = static_cast<std::uint64_t>(std::count_if(pairs_.begin(), pairs_.end(), [](const PairPtr& p) {
        return !p->closed && p->commit_cut != ConnectionPair::CommitCut::draining;
    }));
    s.delay_ms = delay_.count();
    s.blackhole = blackhole_;
    s.refuse = refuse_;
    s.commit_cuts_pending = pending_commit_cuts_;
    return s;
}

}  // namespace tributary::fault_proxy
