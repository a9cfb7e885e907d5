// The listen server's choice of a connection to cut off when it is full:
// the one waiting longest for a request, never one being answered.

#include <catch2/catch.hpp>

#include "metrics/waiting_connections.h"

using tributary::metrics::WaitingConnections;

namespace {
int a, b, c, d, e;  // connection identities
}

TEST_CASE("within its room, no connection is cut off") {
    WaitingConnections room(2);
    CHECK_FALSE(room.opened(&a, 10));
    CHECK_FALSE(room.opened(&b, 11));
    CHECK(room.open() == 2);
}

TEST_CASE("past its room, the connection waiting longest makes room; one cut off is not chosen again") {
    WaitingConnections room(2);
    room.opened(&a, 10);
    room.opened(&b, 11);
    CHECK(room.opened(&c, 12) == 10);
    CHECK(room.opened(&d, 13) == 11);  // a is cut off already, though not closed yet
    room.closed(&a);
    room.closed(&b);
    CHECK(room.open() == 2);
    CHECK(room.opened(&a, 10) == 12);  // the same identity and descriptor, reused: c goes
}

TEST_CASE("a connection being answered is never cut off; after its answer it waits anew") {
    WaitingConnections room(2);
    room.opened(&a, 10);
    room.opened(&b, 11);
    room.busy(&a);
    CHECK(room.opened(&c, 12) == 11);
    room.closed(&b);
    room.waiting(&a);                  // answered: now the newest waiting
    CHECK(room.opened(&d, 13) == 12);  // c waited longer than a
    room.closed(&c);
    room.busy(&a);
    room.busy(&d);
    CHECK_FALSE(room.opened(&e, 14));  // nobody waiting: nothing to cut
    CHECK(room.open() == 3);
}
