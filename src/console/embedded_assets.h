#pragma once

#include <string_view>
#include <vector>

namespace tributary::console {

/// A page file of src/console/assets/, embedded in the binary at build time
/// (cmake/EmbedAssets.cmake): nothing is read from the disk or the internet.
struct EmbeddedAsset {
    std::string_view path;  ///< as served: "/app.js"
    std::string_view content_type;
    std::string_view body;
};

/// Every embedded file (generated).
const std::vector<EmbeddedAsset>& embedded_assets();

/// The asset served at `url_path` ("/" is /index.html), or nullptr.
const EmbeddedAsset* find_asset(std::string_view url_path);

}  // namespace tributary::console
