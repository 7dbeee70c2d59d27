// The limits of serve's HTTP side. A monitoring endpoint serves a few
// scrapers, not the public: every number here bounds what a hostile or
// broken client can hold, while leaving room for Prometheus, Grafana and a
// browser.
#pragma once

#include <cstddef>

namespace gd::http_limits {

// Connections open at once. Each costs a descriptor and at most
// kConnectionMemoryBytes; idle ones cost nothing on the event loop (epoll),
// so the cap is about descriptors and memory, not threads. Lowered to a
// quarter of the open-files limit when that is smaller (serve also keeps
// /proc files open). Past the cap new connections are closed at once.
inline constexpr size_t kMaxConnections = 4096;
// Per-connection buffer for the request line and headers (and the reply's
// headers): a request that does not fit is refused (414 for the request
// line, 431 for headers) and the connection closed, so 40,000 headers cost
// no more than a short request. Browsers with cookies send ~2 KiB.
inline constexpr size_t kConnectionMemoryBytes = 16 * 1024;
// Longer URIs are refused with 414 (the history API's longest is ~100 B).
inline constexpr size_t kMaxUriBytes = 8 * 1024;
// A connection with no traffic for this long is closed: idle keep-alive
// scrapers reconnect cheaply, idle attackers give their descriptor back.
inline constexpr unsigned kIdleTimeoutS = 10;
// Slow handlers (/api/v1/history) run on this many threads, with at most
// kSlowQueue waiting; past that they are answered 503 at once.
inline constexpr size_t kSlowThreads = 2;
inline constexpr size_t kSlowQueue = 16;
// Basic-auth password checks (bcrypt: at cost 10, 60-250 ms each on the
// 2-core build VM) not answered from memory run on a pool of their own, so
// that a wrong-password flood cannot take the slow pool's threads: one
// thread (a flood costs at most one core), at most kAuthQueue waiting, at
// most kAuthQueuePerAddress of them from one client address, taken in turn
// between addresses (a login from another address waits for about one
// check; one from the flood's own address, behind its share). Past that a
// check is answered 503 (Retry-After: 1) and counted in
// gpudoctor_http_auth_checks_refused_total. A header value that failed is
// remembered (basic_auth.h) and answered 401 without a check.
inline constexpr size_t kAuthThreads = 1;
inline constexpr size_t kAuthQueue = 64;
inline constexpr size_t kAuthQueuePerAddress = 32;

// Live event streams (/api/v1/events, Server-Sent Events) open at once: a
// dashboard holds one, so this is room for a team watching one node. Past
// it a new stream gets 503 (the page retries).
inline constexpr size_t kMaxEventStreams = 32;
// Bytes queued for one stream. One sample of 8 GPUs is ~6 KB, so this is
// ~40 s of samples: a client that falls that far behind is dropped, never
// buffered without limit.
inline constexpr size_t kMaxEventQueueBytes = 256 * 1024;

// POST /api/v1/kill (--allow-remote-kill) is the one request with a body:
// a JSON object of a few pids and options. A larger body is refused (413)
// before a byte of it is kept.
inline constexpr size_t kMaxKillBodyBytes = 4096;
// A streamed kill reply's bytes ahead of its client: more than a reply of
// kKillApiMaxPids processes takes, so the session never waits on a slow
// client.
inline constexpr size_t kKillStreamBufferBytes = 8 << 20;

// Trace downloads (/api/v1/export) at once: each reads the store on a
// thread of its own, and a day's trace takes seconds of CPU to write.
inline constexpr size_t kMaxDownloads = 2;
// Compressed bytes a download keeps ahead of its client.
inline constexpr size_t kDownloadBufferBytes = 1 << 20;

}  // namespace gd::http_limits
