#pragma once

namespace tributary::cli {

/// Keeps the memory of page-sized buffers (a response body, its payloads, a
/// COPY buffer: a few hundred KB to a few MB per turn) in the process instead
/// of handing it back to the kernel after every batch. Call once, before the
/// workers start.
void keep_page_buffer_memory();

}  // namespace tributary::cli
