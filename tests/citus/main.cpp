// The Citus suite (issue 29): tributary against a real three-node Citus cluster that
// scripts/test starts with scripts/citus-tmp when Citus is installed. Without one
// (TRIBUTARY_TEST_CITUS_URL unset) it says why in one line and exits 77, which ctest counts
// as skipped.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>

int main(int argc, char* argv[]) {
    if (std::getenv("TRIBUTARY_TEST_CITUS_URL") == nullptr) {
        std::puts(
            "citus: skipped: no Citus cluster (TRIBUTARY_TEST_CITUS_URL is unset; scripts/test starts one "
            "when Citus is installed)");
        return 77;
    }
    return Catch::Session().run(argc, argv);
}
