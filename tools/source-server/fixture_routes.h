#pragma once

#include <optional>
#include <string>

#include <httplib.h>

#include "routes.h"

namespace tributary::source_server {

// Six real APIs' list endpoints, shaped as their documentation shows them (body, parameter
// and header names), over the same sources and events:
//   GET /github/repos/acme/NAME/issues/comments?per_page=N&page=P
//   GET /stripe/NAME/v1/events?limit=N[&ending_before=evt_X|&starting_after=evt_X]
//   GET /shopify/NAME/admin/api/2024-01/orders.json?limit=N[&page_info=P]
//   GET /slack/NAME/api/conversations.history?channel=C123&limit=N[&cursor=X]
//   GET /zendesk/NAME/api/v2/incremental/tickets.json?start_time=UNIX[&per_page=N]
//   GET /hubspot/NAME/crm/v3/objects/contacts?limit=N[&after=X]
// README.md says how each orders, pages and ends.
void install_fixture_routes(httplib::Server& server, ServerContext& context);

// Every record of `source` as the fixture `style` serves it (oldest first, Stripe too), as a
// JSON array; empty when `style` names no fixture.
std::optional<std::string> fixture_truth(const ServerContext& context, const Source& source, const std::string& style);

}  // namespace tributary::source_server
