#include "serve/mhd_reply.h"

#include <netdb.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>

#include "serve/web_page.h"

namespace gd {
namespace {

MHD_Result add_param(void* cls, MHD_ValueKind, const char* key,
                     const char* value) {
  static_cast<QueryParams*>(cls)->emplace(key, value ? value : "");
  return MHD_YES;
}

struct HeaderCount {
  const char* name;
  size_t n = 0;
};

MHD_Result count_header(void* cls, MHD_ValueKind, const char* key,
                        const char*) {
  auto* count = static_cast<HeaderCount*>(cls);
  if (key && strcasecmp(key, count->name) == 0) ++count->n;
  return MHD_YES;
}

}  // namespace

size_t header_count(MHD_Connection* c, const char* name) {
  HeaderCount count{name};
  MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &count);
  return count.n;
}

QueryParams params_of(MHD_Connection* c) {
  QueryParams q;
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_param, &q);
  return q;
}

std::optional<std::string_view> header(MHD_Connection* c, const char* name) {
  const char* v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
  if (!v) return std::nullopt;
  return std::string_view(v);
}

// A body up to this size is read and dropped before the 413, so that a
// client still sending it reads the answer instead of a reset connection;
// a larger one is refused at once and the connection closed.
constexpr size_t kMaxDrainedBodyBytes = 1 << 20;

bool drainable_body(MHD_Connection* c) {
  if (header(c, MHD_HTTP_HEADER_TRANSFER_ENCODING)) return false;
  auto len = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (!len) return false;
  char* end = nullptr;
  const std::string text(*len);
  const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  return end && *end == 0 && n <= kMaxDrainedBodyBytes;
}

bool has_body(MHD_Connection* c) {
  if (header(c, MHD_HTTP_HEADER_TRANSFER_ENCODING)) return true;
  auto len = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
  return len && *len != "0";
}

std::string client_address(MHD_Connection* c) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!info || !info->client_addr) return "?";
  const sockaddr* a = info->client_addr;
  const socklen_t len =
      a->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  char host[NI_MAXHOST] = {};
  if (getnameinfo(a, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0)
    return "?";
  return host;
}

namespace {

void free_body(void* body) { delete static_cast<std::string*>(body); }

void release_shared_body(void* holder) {
  delete static_cast<std::shared_ptr<const std::string>*>(holder);
}

}  // namespace

void add_security_headers(MHD_Response* r) {
  MHD_add_response_header(r, "Content-Security-Policy", kContentSecurityPolicy);
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(r, "X-Frame-Options", "DENY");
  MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

MHD_Result queue(MHD_Connection* c, ApiReply reply) {
  MHD_Response* r = nullptr;
  if (!reply.static_body.empty()) {  // embedded asset: no copy, no free
    r = MHD_create_response_from_buffer(
        reply.static_body.size(), const_cast<char*>(reply.static_body.data()),
        MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
  } else if (reply.shared_body) {  // a cache's: held until sent, not copied
    auto* holder =
        new std::shared_ptr<const std::string>(std::move(reply.shared_body));
    r = MHD_create_response_from_buffer_with_free_callback_cls(
        (*holder)->size(), const_cast<char*>((*holder)->data()),
        release_shared_body, holder);
    if (!r) {
      delete holder;
      return MHD_NO;
    }
  } else {
    // The body is handed over, not copied (a /metrics page is ~60 KB).
    auto* body = new std::string(std::move(reply.body));
    r = MHD_create_response_from_buffer_with_free_callback_cls(
        body->size(), body->data(), free_body, body);
    if (!r) {
      delete body;
      return MHD_NO;
    }
  }
  add_security_headers(r);
  for (const auto& [name, value] : reply.headers)
    MHD_add_response_header(r, name.c_str(), value.c_str());
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                          reply.content_type.c_str());
  if (reply.status == 401)
    MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                            "Basic realm=\"gpudoctor\"");
  const bool allow_given =
      std::any_of(reply.headers.begin(), reply.headers.end(),
                  [](const auto& h) { return h.first == "Allow"; });
  if (reply.status == 405 && !allow_given)
    MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  const MHD_Result ok =
      MHD_queue_response(c, static_cast<unsigned>(reply.status), r);
  MHD_destroy_response(r);
  return ok;
}

MHD_Result queue_produced(
    MHD_Connection* c, void* holder, size_t block,
    MHD_ContentReaderCallback read, MHD_ContentReaderFreeCallback release,
    const char* type,
    std::initializer_list<std::pair<const char*, std::string>> more) {
  MHD_Response* r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, block,
                                                      read, holder, release);
  if (!r) {
    release(holder);
    return MHD_NO;
  }
  add_security_headers(r);
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  for (const auto& [name, value] : more)
    MHD_add_response_header(r, name, value.c_str());
  const MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ok;
}

}  // namespace gd
