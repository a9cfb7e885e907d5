#include "embedded_assets.h"

namespace tributary::console {

const EmbeddedAsset* find_asset(std::string_view url_path) {
    if (url_path == "/") url_path = "/index.html";
    for (const auto& asset : embedded_assets())
        if (asset.path == url_path) return &asset;
    return nullptr;
}

}  // namespace tributary::console
