// Replies of a fake remote-read server for the tests: streamed frames of
// XOR chunks, or the older snappy-compressed samples, made with the same
// messages and chunk writer a real Prometheus' replies are read with.
#pragma once

#include <snappy.h>

#include <string>
#include <utility>
#include <vector>

#include "http_client/remote_read.pb.h"
#include "http_client/remote_read_frames.h"
#include "http_client/xor_chunk.h"

namespace gd::http::testing {

struct FakeSeries {
  std::vector<std::pair<std::string, std::string>> labels;
  // Each inner vector is one chunk.
  std::vector<std::vector<prom::RawSample>> chunks;
};

inline std::string http_reply(int status, const std::string& type,
                              const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         body;
}

inline remote::ChunkedReadResponse chunked(const std::vector<FakeSeries>& all,
                                           int64_t query_index = 0) {
  remote::ChunkedReadResponse r;
  r.set_query_index(query_index);
  for (const auto& s : all) {
    auto* cs = r.add_chunked_series();
    for (const auto& [n, v] : s.labels) {
      auto* l = cs->add_labels();
      l->set_name(n);
      l->set_value(v);
    }
    for (const auto& samples : s.chunks) {
      auto* c = cs->add_chunks();
      c->set_type(remote::Chunk::XOR);
      c->set_min_time_ms(samples.front().t_ms);
      c->set_max_time_ms(samples.back().t_ms);
      c->set_data(prom::encode_xor_chunk(samples));
    }
  }
  return r;
}

// A 200 reply of streamed frames, one frame per message.
inline std::string streamed_reply(
    const std::vector<remote::ChunkedReadResponse>& frames) {
  std::string body;
  for (const auto& f : frames) body += prom::frame(f.SerializeAsString());
  return http_reply(
      200,
      "application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse",
      body);
}

// A 200 reply of the SAMPLES kind: one snappy-compressed ReadResponse.
inline std::string samples_reply(const std::vector<FakeSeries>& all) {
  remote::ReadResponse r;
  auto* result = r.add_results();
  for (const auto& s : all) {
    auto* ts = result->add_timeseries();
    for (const auto& [n, v] : s.labels) {
      auto* l = ts->add_labels();
      l->set_name(n);
      l->set_value(v);
    }
    for (const auto& chunk : s.chunks)
      for (const auto& x : chunk) {
        auto* sample = ts->add_samples();
        sample->set_timestamp(x.t_ms);
        sample->set_value(x.v);
      }
  }
  std::string body;
  const std::string raw = r.SerializeAsString();
  snappy::Compress(raw.data(), raw.size(), &body);
  return http_reply(200, "application/x-protobuf", body);
}

}  // namespace gd::http::testing
