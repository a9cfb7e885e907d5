#include "page_buffer_memory.h"

#include <cstdlib>  // defines __GLIBC__ with glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tributary::cli {

namespace {

// Buffers up to this size come from the worker's heap, not from mmap.
constexpr int kHeapBufferBytes = 4 << 20;
// Free memory at the top of a heap is given back only beyond this.
constexpr int kKeptFreeBytes = 2 * kHeapBufferBytes;

}  // namespace

void keep_page_buffer_memory() {
#if defined(__GLIBC__)
    // glibc adapts both thresholds to the sizes it sees freed. With the
    // loader's pattern (every turn allocates and frees the same few large
    // buffers in each worker's arena) it came to trim a worker's heap after
    // each batch and fault the pages in again on the next: on the backlog
    // bench 62 000 page faults instead of 2 000 per 800 000 events, and
    // system CPU up by two thirds. Fixed values stop the adapting; the free
    // memory kept is at most kKeptFreeBytes per arena, and larger bodies are
    // still mmapped and given back at once.
    mallopt(M_MMAP_THRESHOLD, kHeapBufferBytes);
    mallopt(M_TRIM_THRESHOLD, kKeptFreeBytes);
#endif
}

}  // namespace tributary::cli
