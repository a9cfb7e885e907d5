#include "fixture_records.h"

#include <cstdio>

#include "iso_time.h"

namespace tributary::source_server {
namespace {

std::int64_t seconds_of(const EventRef& event) { return event.updated_ms / 1000; }

void append_text_field(std::string& out, const char* name, const EventGenerator& gen, const SourceIdentity& source,
                       std::int64_t id) {
    out += ",\"";
    out += name;
    out += "\":\"";
    gen.append_text(out, source, id);
    out += '"';
}

}  // namespace

void append_github_comment(std::string& out, const EventGenerator& gen, const SourceIdentity& source,
                           const EventRef& event) {
    const std::string time = iso_seconds(seconds_of(event));
    out += "{\"id\":";
    append_int(out, event.id);
    out += ",\"node_id\":\"IC_kwDO";
    append_int(out, event.id);
    out += "\",\"url\":\"https://api.github.com/repos/acme/";
    out += source.name;  // names are [A-Za-z0-9._-]: no escaping needed
    out += "/issues/comments/";
    append_int(out, event.id);
    out += '"';
    append_text_field(out, "body", gen, source, event.id);
    out += ",\"user\":{\"login\":\"octocat";
    append_int(out, event.id % 7);
    out += "\",\"id\":";
    append_int(out, 583230 + event.id % 7);
    out += "},\"created_at\":\"" + time + "\",\"updated_at\":\"" + time + "\"}";
}

std::string stripe_event_id(std::int64_t id) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "evt_%010lld", static_cast<long long>(id));
    return buf;
}

void append_stripe_event(std::string& out, const EventGenerator& gen, const SourceIdentity& source,
                         const EventRef& event) {
    out += "{\"id\":\"" + stripe_event_id(event.id) + "\",\"object\":\"event\",\"type\":\"";
    out += event.id % 3 == 0 ? "invoice.paid" : "customer.updated";
    out += "\",\"created\":";
    append_int(out, seconds_of(event));
    out += ",\"data\":{\"object\":";
    gen.append_payload(out, source, event);
    out += "}}";
}

void append_shopify_order(std::string& out, const EventGenerator& gen, const SourceIdentity& source,
                          const EventRef& event) {
    const std::string time = iso_seconds_offset(seconds_of(event));
    char price[32];
    std::snprintf(price, sizeof price, "%lld.%02lld", static_cast<long long>(event.id * 37 % 1000),
                  static_cast<long long>(event.id % 100));
    out += "{\"id\":";
    append_int(out, event.id);
    out += ",\"name\":\"#";
    append_int(out, 1000 + event.id);
    out += "\",\"created_at\":\"" + time + "\",\"updated_at\":\"" + time + "\",\"total_price\":\"" + price + '"';
    append_text_field(out, "note", gen, source, event.id);
    out += '}';
}

void append_slack_message(std::string& out, const EventGenerator& gen, const SourceIdentity& source,
                          const EventRef& event) {
    char ts[40];
    std::snprintf(ts, sizeof ts, "%lld.%06lld", static_cast<long long>(event.updated_ms / 1000),
                  static_cast<long long>(event.updated_ms % 1000 * 1000));
    out += "{\"type\":\"message\",\"user\":\"U0";
    append_int(out, 1000000 + event.id % 5);
    out += '"';
    append_text_field(out, "text", gen, source, event.id);
    out += ",\"ts\":\"";
    out += ts;
    out += "\"}";
}

void append_zendesk_ticket(std::string& out, const EventGenerator& gen, const SourceIdentity& source, std::int64_t id,
                           std::int64_t created_s, std::int64_t updated_s, bool updated) {
    out += "{\"id\":";
    append_int(out, id);
    out += ",\"url\":\"https://acme.zendesk.com/api/v2/tickets/";
    append_int(out, id);
    out += ".json\"";
    append_text_field(out, "subject", gen, source, id);
    out += updated ? ",\"status\":\"solved\"" : ",\"status\":\"open\"";
    out += ",\"created_at\":\"" + iso_seconds(created_s) + "\",\"updated_at\":\"" + iso_seconds(updated_s) + "\"}";
}

void append_hubspot_contact(std::string& out, const EventGenerator& gen, const SourceIdentity& source,
                            const EventRef& event) {
    const std::string time = iso_ms(event.updated_ms);
    const std::string id = std::to_string(event.id);
    out += "{\"id\":\"" + id + "\",\"properties\":{\"createdate\":\"" + time + "\",\"email\":\"contact" + id +
           "@example.com\",\"firstname\":\"Ada\",\"hs_object_id\":\"" + id + "\",\"lastmodifieddate\":\"" + time +
           "\",\"lastname\":\"";
    gen.append_text(out, source, event.id);
    out += "\"},\"createdAt\":\"" + time + "\",\"updatedAt\":\"" + time + "\",\"archived\":false}";
}

}  // namespace tributary::source_server
