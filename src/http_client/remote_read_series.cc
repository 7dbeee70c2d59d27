#include "http_client/remote_read_series.h"

#include <algorithm>

#include "http_client/prometheus_internal.h"
#include "http_client/remote_read.pb.h"
#include "http_client/remote_read_wire.h"

namespace gd::http::prom {

RemoteReadSeries::RemoteReadSeries(const InstantGrid& grid,
                                   const Limits& limits)
    : grid_(grid),
      limits_(limits),
      raw_left_(limits.max_points * kRawPerPoint),
      messages_left_(limits.max_series * kMessagesPerSeries) {}

// One more series message; "" or why refused.
std::string RemoteReadSeries::count_message() {
  if (messages_left_ == 0)
    return "more than " +
           std::to_string(limits_.max_series * kMessagesPerSeries) +
           " series messages (empty ones too); narrow the query";
  --messages_left_;
  return "";
}

template <class LabelList>
std::string RemoteReadSeries::cursor(const LabelList& labels,
                                     InstantGrid::Cursor*& out) {
  if (static_cast<size_t>(labels.size()) > limits_.max_labels)
    return "a series has more than " + std::to_string(limits_.max_labels) +
           " labels";
  Labels set;
  for (const auto& l : labels)
    set.emplace_back(capped(l.name(), limits_.max_label_bytes),
                     capped(l.value(), limits_.max_label_bytes));
  std::sort(set.begin(), set.end());
  auto [it, fresh] = index_.try_emplace(key_of(set), labels_.size());
  if (fresh) {
    if (labels_.size() == limits_.max_series)
      return "more than " + std::to_string(limits_.max_series) +
             " series; narrow the query";
    labels_.push_back(std::move(set));
    cursors_.emplace_back(grid_);
  }
  out = &cursors_[it->second];
  return "";
}

std::string RemoteReadSeries::chunked(std::string_view message) {
  // ChunkedReadResponse: chunked_series = 1.
  return each_message(message, 1, [&](std::string_view bytes) {
    if (auto why = count_message(); !why.empty()) return why;
    remote::ChunkedSeries s;
    if (!s.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return std::string("a remote-read frame is not a ChunkedReadResponse");
    InstantGrid::Cursor* c = nullptr;
    if (auto why = cursor(s.labels(), c); !why.empty()) return why;
    for (const auto& chunk : s.chunks()) {
      // Histograms have no float value for the trace model.
      if (chunk.type() != remote::Chunk::XOR) continue;
      raw_.clear();
      if (auto why = decode_xor_chunk(chunk.data(), raw_left_, raw_);
          !why.empty())
        return why;
      raw_left_ -= raw_.size();
      for (const RawSample& x : raw_)
        if (!push(*c, x.t_ms, x.v)) return too_many_points();
    }
    return std::string();
  });
}

// A ReadResponse: results = 1, each a QueryResult whose timeseries = 1.
std::string RemoteReadSeries::samples(std::string_view response) {
  return each_message(response, 1, [&](std::string_view result) {
    return each_message(result, 1, [&](std::string_view bytes) {
      if (auto why = count_message(); !why.empty()) return why;
      remote::TimeSeries s;
      if (!s.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return std::string("the remote-read reply is not a ReadResponse");
      InstantGrid::Cursor* c = nullptr;
      if (auto why = cursor(s.labels(), c); !why.empty()) return why;
      if (static_cast<size_t>(s.samples_size()) > raw_left_)
        return "more than " +
               std::to_string(limits_.max_points * kRawPerPoint) +
               " raw samples";
      raw_left_ -= static_cast<size_t>(s.samples_size());
      for (const auto& x : s.samples())
        if (!push(*c, x.timestamp(), x.value())) return too_many_points();
      return std::string();
    });
  });
}

// The series on the grid; "" or why refused (over the points bound).
std::string RemoteReadSeries::take(std::vector<Series>& out) {
  size_t points = 0;
  for (size_t i = 0; i < labels_.size(); ++i) {
    Series s{std::move(labels_[i]), cursors_[i].finish()};
    points += s.points.size();
    if (points > limits_.max_points) return too_many_points();
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  return "";
}

// A raw sample onto its series' grid, counting the points it gives there
// against the bound as they are made (not after every cursor is full);
// false once the points are over it.
bool RemoteReadSeries::push(InstantGrid::Cursor& c, int64_t t_ms, double v) {
  const size_t before = c.points();
  c.push(t_ms, v);
  points_ += c.points() - before;
  return points_ <= limits_.max_points;
}

std::string RemoteReadSeries::too_many_points() const {
  return "more than " + std::to_string(limits_.max_points) +
         " points; ask for a shorter range or a longer step";
}

}  // namespace gd::http::prom
