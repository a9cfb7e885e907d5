#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <csignal>

int main(int argc, char** argv) {
    // As in tributary's own main: a child that closes its stdin early must
    // cost the writer an EPIPE, not the process (test_exec_batch_handler).
    std::signal(SIGPIPE, SIG_IGN);
    return Catch::Session().run(argc, argv);
}
