// The HTTP client of `top --connect` (remote_feed.cc, remote_kill.cc): one
// connection per request to serve, with its timeouts, basic auth and, for
// https, the certificates to trust; and why a request could not be made,
// in words a user can act on.
#pragma once

#include <httplib.h>

#include <memory>
#include <string>

#include "monitor/remote_feed.h"

namespace gd::monitor {

// A client for `url` (keep-alive off): connecting and writing bounded by
// o.request_timeout_s, reading by `read_timeout_s`.
std::unique_ptr<httplib::Client> remote_client(const RemoteOptions& o,
                                               const RemoteUrl& url,
                                               double read_timeout_s);

// "cannot reach URL: why" for a request that got no HTTP answer.
std::string cannot_reach(const RemoteOptions& o, httplib::Error e);

}  // namespace gd::monitor
