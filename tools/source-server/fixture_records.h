#pragma once

#include <cstdint>
#include <string>

#include "event_generator.h"

namespace tributary::source_server {

// One event as each of the six real APIs documents its records. Every text is a pure
// function of (source, id, times), so /_truth?style=... matches the routes byte for byte.

// GitHub issue comment: {"id","node_id","url","body","user":{"login","id"},"created_at","updated_at"}
void append_github_comment(std::string& out, const EventGenerator& gen, const SourceIdentity& source,
                           const EventRef& event);
// Stripe event: {"id":"evt_...","object":"event","type","created","data":{"object":PAYLOAD}}
void append_stripe_event(std::string& out, const EventGenerator& gen, const SourceIdentity& source,
                         const EventRef& event);
// "evt_0000000042" (Stripe ids of the fixture; ending_before takes them back).
std::string stripe_event_id(std::int64_t id);
// Shopify order: {"id","name":"#1042","created_at","updated_at","total_price","note"}
void append_shopify_order(std::string& out, const EventGenerator& gen, const SourceIdentity& source,
                          const EventRef& event);
// Slack message: {"type":"message","user","text","ts":"1700000000.042000"}
void append_slack_message(std::string& out, const EventGenerator& gen, const SourceIdentity& source,
                          const EventRef& event);
// Zendesk ticket (one version): {"id","url","subject","status","created_at","updated_at"}
void append_zendesk_ticket(std::string& out, const EventGenerator& gen, const SourceIdentity& source, std::int64_t id,
                           std::int64_t created_s, std::int64_t updated_s, bool updated);
// HubSpot contact: {"id":"42","properties":{...},"createdAt","updatedAt","archived":false}
void append_hubspot_contact(std::string& out, const EventGenerator& gen, const SourceIdentity& source,
                            const EventRef& event);

}  // namespace tributary::source_server
