#include "source_reading.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace tributary::postgres {

namespace {

using Json = nlohmann::json;
using Pairs = std::vector<std::pair<std::string, std::string>>;

Json pairs_json(const Pairs& pairs) {
    auto out = Json::array();
    for (const auto& [name, value] : pairs) out.push_back(Json::array({name, value}));
    return out;
}

Pairs pairs_of(const Json& json) {
    Pairs out;
    for (const auto& pair : json) out.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
    return out;
}

Json auth_json(const EnvAuth& auth) {
    Json out = Json::object();
    if (!auth.bearer.empty()) out["bearer_env"] = auth.bearer;
    if (!auth.basic_user.empty()) out["basic_env"] = Json::array({auth.basic_user, auth.basic_password});
    if (!auth.headers.empty()) out["header_env"] = pairs_json(auth.headers);
    if (!auth.query.empty()) out["query_env"] = pairs_json(auth.query);
    if (auth.oauth2)
        out["oauth2"] = {{"token_url", auth.oauth2->token_url},
                         {"client_id_env", auth.oauth2->client_id},
                         {"client_secret_env", auth.oauth2->client_secret},
                         {"scope", auth.oauth2->scope}};
    return out;
}

void read_auth(const Json& json, EnvAuth& auth) {
    auth.bearer = json.value("bearer_env", "");
    if (json.contains("basic_env")) {
        auth.basic_user = json["basic_env"].at(0).get<std::string>();
        auth.basic_password = json["basic_env"].at(1).get<std::string>();
    }
    if (json.contains("header_env")) auth.headers = pairs_of(json["header_env"]);
    if (json.contains("query_env")) auth.query = pairs_of(json["query_env"]);
    if (json.contains("oauth2")) {
        const auto& o = json["oauth2"];
        auth.oauth2 = EnvAuth::OAuth2{o.at("token_url").get<std::string>(), o.at("client_id_env").get<std::string>(),
                                      o.at("client_secret_env").get<std::string>(), o.value("scope", "")};
    }
}

void put_if(Json& out, const char* name, const std::string& value) {
    if (!value.empty()) out[name] = value;
}

}  // namespace

std::string reading_json(const RecordLayout& layout, const Paging& paging, const EnvAuth& auth) {
    const Paging defaults;
    Json out = Json::object();
    if (layout.records) out["records"] = *layout.records;
    if (layout.key != RecordLayout{}.key) out["key"] = layout.key;
    if (layout.payload) out["payload"] = *layout.payload;
    if (layout.newest_first) out["newest_first"] = true;
    if (paging.style != defaults.style) out["paginate"] = to_string(paging.style);
    if (paging.cursor_param != default_cursor_param(paging.style)) out["cursor_param"] = paging.cursor_param;
    if (paging.limit_param != defaults.limit_param) out["limit_param"] = paging.limit_param;
    if (!paging.params.empty()) out["params"] = pairs_json(paging.params);
    put_if(out, "next", paging.next);
    put_if(out, "has_more", paging.has_more);
    put_if(out, "end_of_stream", paging.end_of_stream);
    put_if(out, "time_field", paging.time_field);
    if (paging.lookback.count() != 0) out["lookback_s"] = paging.lookback.count();
    if (paging.first_page != defaults.first_page) out["first_page"] = paging.first_page;
    if (paging.inclusive) out["inclusive"] = true;
    if (!paging.allowed_hosts.empty()) out["allow_redirect_host"] = paging.allowed_hosts;
    if (!auth.empty()) out["auth"] = auth_json(auth);
    return out.dump();
}

void read_reading_json(const std::string& text, Source& source) {
    if (text.empty() || text == "{}") return;
    try {
        const Json json = Json::parse(text);
        RecordLayout& layout = source.layout;
        if (json.contains("records")) layout.records = json["records"].get<std::string>();
        if (json.contains("key")) layout.key = json["key"].get<std::vector<std::string>>();
        if (json.contains("payload")) layout.payload = json["payload"].get<std::string>();
        layout.newest_first = json.value("newest_first", false);
        Paging& paging = source.paging;
        if (json.contains("paginate")) {
            const auto style = paging_style_named(json["paginate"].get<std::string>());
            if (!style) throw std::runtime_error("unknown paginate style");
            paging.style = *style;
        }
        paging.cursor_param = json.value("cursor_param", std::string(default_cursor_param(paging.style)));
        paging.limit_param = json.value("limit_param", paging.limit_param);
        if (json.contains("params")) paging.params = pairs_of(json["params"]);
        paging.next = json.value("next", "");
        paging.has_more = json.value("has_more", "");
        paging.end_of_stream = json.value("end_of_stream", "");
        paging.time_field = json.value("time_field", "");
        paging.lookback = std::chrono::seconds(json.value("lookback_s", std::int64_t{0}));
        paging.first_page = json.value("first_page", paging.first_page);
        paging.inclusive = json.value("inclusive", false);
        if (json.contains("allow_redirect_host"))
            paging.allowed_hosts = json["allow_redirect_host"].get<std::vector<std::string>>();
        if (json.contains("auth")) read_auth(json["auth"], source.endpoint.auth);
    } catch (const std::exception& e) {
        throw std::runtime_error("source " + source.name + ": its reading options in tributary.sources are not " +
                                 "what `source add` writes (" + e.what() + ")");
    }
}

}  // namespace tributary::postgres
