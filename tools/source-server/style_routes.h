#pragma once

#include <optional>
#include <string>

#include <httplib.h>

#include "routes.h"

namespace tributary::source_server {

// The generic paging styles, over the same sources and events as /sources/NAME/events:
//   GET /styles/after-key/NAME?starting_after=KEY&limit=L  {"data":[...],"has_more":bool}
//   GET /styles/cursor/NAME?cursor=TOKEN&limit=L           {"data":[...],"next_cursor":TOKEN|null}
//   GET /styles/link/NAME?page_start=ID&limit=L            [...] + Link: <...>; rel="next"
//   GET /styles/time/NAME?since=TIME&limit=L               {"data":[...]} by (updated_at, id)
//   GET /styles/page/NAME?page=P&limit=L                   {"results":[...]}
//   GET /styles/offset/NAME?offset=O&limit=L               {"items":[...]}
// Records: see style_records.h. The hostile modes token-loop ... token-huge shape them.
void install_style_routes(httplib::Server& server, ServerContext& context);

// Every record of `source` as the route of `style` serves it, in order, as a JSON array;
// empty when `style` names no generic style.
std::optional<std::string> style_truth(const ServerContext& context, const Source& source, const std::string& style);

}  // namespace tributary::source_server
