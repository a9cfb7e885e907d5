#include "link_header.h"

#include <cctype>
#include <string_view>

namespace tributary {
namespace {

/// A cursor over one Link header value: link-value *( "," link-value ), each
/// `<uri-reference> *( ";" param )`, param `name [ "=" ( token / quoted-string ) ]`.
class LinkReader {
public:
    explicit LinkReader(std::string_view text) : text_(text) {}

    /// The next link's target and whether its rel holds "next"; nothing at
    /// the end or at something that is not a link.
    std::optional<std::pair<std::string, bool>> next() {
        skip_separators();
        if (at_end() || text_[pos_] != '<') return std::nullopt;
        const auto close = text_.find('>', pos_);
        if (close == std::string_view::npos) return std::nullopt;
        std::string target(text_.substr(pos_ + 1, close - pos_ - 1));
        pos_ = close + 1;
        bool is_next = false;
        for (;;) {
            skip_space();
            if (at_end() || text_[pos_] == ',') break;
            if (text_[pos_] != ';') return std::nullopt;
            ++pos_;
            const auto param = parameter();
            if (!param) return std::nullopt;
            if (param->first == "rel" && !seen_rel_) is_next = has_next(param->second);
            seen_rel_ = seen_rel_ || param->first == "rel";
        }
        seen_rel_ = false;
        return std::make_pair(std::move(target), is_next);
    }

private:
    bool at_end() const { return pos_ >= text_.size(); }
    void skip_space() {
        while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
    }
    void skip_separators() {
        while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == ',')) ++pos_;
    }
    static bool token_char(char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    }

    std::optional<std::pair<std::string, std::string>> parameter() {
        skip_space();
        std::string name;
        while (!at_end() && token_char(text_[pos_])) name += static_cast<char>(std::tolower(text_[pos_++]));
        if (name.empty()) return std::nullopt;
        skip_space();
        if (at_end() || text_[pos_] != '=') return std::make_pair(name, std::string());
        ++pos_;
        skip_space();
        std::string value;
        if (!at_end() && text_[pos_] == '"') {
            ++pos_;
            for (;;) {
                if (at_end()) return std::nullopt;  // an unterminated quoted string
                char c = text_[pos_++];
                if (c == '"') break;
                if (c == '\\') {
                    if (at_end()) return std::nullopt;
                    c = text_[pos_++];
                }
                value += c;
            }
        } else {
            while (!at_end() && token_char(text_[pos_])) value += text_[pos_++];
        }
        return std::make_pair(name, value);
    }

    /// RFC 8288 §3.3: only the first rel parameter counts; its relation
    /// types are separated by spaces and compared case-insensitively.
    static bool has_next(std::string_view rel) {
        std::size_t start = 0;
        while (start < rel.size()) {
            auto end = rel.find_first_of(" \t", start);
            if (end == std::string_view::npos) end = rel.size();
            std::string type(rel.substr(start, end - start));
            for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (type == "next") return true;
            start = end + 1;
        }
        return false;
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    bool seen_rel_ = false;
};

}  // namespace

std::optional<std::string> next_link(const std::vector<std::string>& link_headers) {
    for (const auto& header : link_headers) {
        LinkReader reader(header);
        while (auto link = reader.next())
            if (link->second) return link->first;
    }
    return std::nullopt;
}

}  // namespace tributary
