#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/idle_pause.h"
#include "core/stop_signal.h"
#include "core/wakeup.h"
#include "tail_feed.h"
#include "tail_slots.h"

namespace tributary::console {

/// One live tail (GET /api/tail) as server-sent events: each event as
/// `id: <position>` (TailEvent's id), `event: event`, `data: <JSON line>`; woken by the
/// loaders' hints with a poll as fallback, and a `: keep-alive` comment when
/// nothing was sent for a while (proxies close idle connections). While the
/// database is away the stream stays open and says so once (`event:
/// outage`, data {"error": ...}), then `event: resumed` when it is back.
///
/// The HTTP adapter calls step() in a loop on the stream's thread; the
/// stream holds its TailSlot and its feed (a session of its own) until it is
/// destroyed.
class TailStream {
public:
    struct Timing {
        std::chrono::milliseconds poll{5000};         ///< longest wait without a hint
        std::chrono::milliseconds keep_alive{15000};  ///< a comment after this long without a write
        int batch = 500;                              ///< events read at most at once
    };
    /// Writes to the client; false when it is gone.
    using Write = std::function<bool(std::string_view)>;
    /// Whether the client is still there (its connection open), asked after
    /// each wait: a page closed is let go at once rather than at the next
    /// keep-alive that fails.
    using Connected = std::function<bool()>;

    TailStream(std::unique_ptr<TailFeed> feed, TailSlot slot, std::string pattern, std::string position,
               std::vector<TailEvent> first, Wakeup& wakeup, const StopSignal& stop, Timing timing, std::string peer);
    ~TailStream();

    /// Sends what is there (the first events, new ones, a keep-alive), after
    /// waiting for a hint when caught up. False when the stream is over: a
    /// stop, the client gone (a failed write, or `connected` false), or an
    /// unexpected error.
    bool step(const Write& write, const Connected& connected = {});

    /// One event as its server-sent-event frame.
    static std::string frame(const TailEvent& event);

private:
    std::chrono::milliseconds next_wait() const;
    bool send(const Write& write, std::string_view text);
    bool read_and_send(const Write& write);

    std::unique_ptr<TailFeed> feed_;
    TailSlot slot_;
    const std::string pattern_;
    std::string position_;
    std::vector<TailEvent> pending_;
    Wakeup& wakeup_;
    const StopSignal& stop_;
    const Timing timing_;
    const std::string peer_;
    bool started_ = false;
    bool read_now_ = false;  ///< the last read was full: more may be there already
    bool in_outage_ = false;
    IdlePause outage_pause_{std::chrono::milliseconds(500), std::chrono::milliseconds(10000)};
    std::chrono::steady_clock::time_point last_write_ = std::chrono::steady_clock::now();
};

}  // namespace tributary::console
