// libmicrohttpd glue for http_server.cc: what a request says (its query,
// headers, body length and address) and the replies queued for it, whole
// (an ApiReply) or produced on the event loop by another thread's buffer.
// Every reply carries the security headers of web_page.h.
#pragma once

#include <microhttpd.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "serve/api.h"
#include "serve/parked_buffer.h"

namespace gd {

QueryParams params_of(MHD_Connection* c);
// The first header of that name (case-insensitive), if any.
std::optional<std::string_view> header(MHD_Connection* c, const char* name);
// How many headers of that name the request has.
size_t header_count(MHD_Connection* c, const char* name);
// A body small enough to read and drop before refusing it (so the client
// reads the answer instead of a reset), sent with a Content-Length.
bool drainable_body(MHD_Connection* c);
bool has_body(MHD_Connection* c);
// The client's address as text ("10.0.0.5", "::1"; "?" when unknown).
std::string client_address(MHD_Connection* c);

void add_security_headers(MHD_Response* r);
// `reply` as the answer (its body handed over, not copied).
MHD_Result queue(MHD_Connection* c, ApiReply reply);

// A 200 whose body `read` produces on the event loop from `holder`, which
// `release` frees when the connection ends (or here, on failure).
MHD_Result queue_produced(
    MHD_Connection* c, void* holder, size_t block,
    MHD_ContentReaderCallback read, MHD_ContentReaderFreeCallback release,
    const char* type,
    std::initializer_list<std::pair<const char*, std::string>> more = {});

// read/release for queue_produced over a heap std::shared_ptr<T>, where T
// has ParkedBuffer's read() and cancel() (a ParkedBuffer, a trace
// download): kWait parks the connection until the producer has more.
template <class T>
ssize_t read_parked(void* cls, uint64_t, char* buf, size_t max) {
  auto& b = **static_cast<std::shared_ptr<T>*>(cls);
  size_t n = 0;
  switch (b.read(buf, max, n)) {
    case ParkedBuffer::Read::kData:
      return static_cast<ssize_t>(n);
    case ParkedBuffer::Read::kWait:
      return 0;  // suspended; resumed by the producer
    case ParkedBuffer::Read::kEnd:
      return MHD_CONTENT_READER_END_OF_STREAM;
    case ParkedBuffer::Read::kError:
      break;
  }
  return MHD_CONTENT_READER_END_WITH_ERROR;
}

// The client is gone (its response freed).
template <class T>
void free_parked(void* cls) {
  auto* b = static_cast<std::shared_ptr<T>*>(cls);
  (*b)->cancel();
  delete b;
}

}  // namespace gd
