#pragma once

#include <string>

#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace tributary::metrics {

/// A family of gauges registered in `registry`, as every metrics class here makes them.
inline prometheus::Family<prometheus::Gauge>& gauge_family(prometheus::Registry& registry, const std::string& name,
                                                           const std::string& help) {
    return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

}  // namespace tributary::metrics
