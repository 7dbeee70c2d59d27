#include "trace/parallel_parse.h"

#include <simdjson.h>

#include <utility>

#include "trace/json_in.h"

namespace gd {

ParallelSampleParser::ParallelSampleParser(LineSource& source, int threads)
    : source_(source) {
  if (threads < 1) threads = 1;
  // Two batches per worker: one being parsed, one parsed and waiting, so a
  // worker rarely waits for the consumer to hand storage back.
  for (int i = 0; i < 2 * threads + 1; ++i)
    free_.push_back(std::make_unique<Batch>());
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ParallelSampleParser::~ParallelSampleParser() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  free_cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void ParallelSampleParser::fill(Batch& b) {
  b.text.clear();
  b.lines.clear();
  b.parsed = b.taken = 0;
  b.error = nullptr;
  b.last = false;
  b.seq = next_seq_in_++;
  try {
    std::string_view line;
    while (b.lines.size() < kBatchLines) {
      if (!source_.next(line)) {
        b.last = true;
        break;
      }
      if (LineSource::is_blank(line)) continue;
      b.lines.push_back({b.text.size(), line.size(), source_.line_number()});
      b.text.append(line);
      b.text.append(LineSource::kPadding, ' ');
    }
  } catch (...) {
    // A read error comes after the lines read before it, as it would
    // from a sequential reader.
    b.error = std::current_exception();
    b.last = true;
  }
  if (b.last) source_done_ = true;
}

void ParallelSampleParser::parse(Batch& b, const std::string& source_name) {
  thread_local simdjson::dom::parser parser;
  if (b.samples.size() < b.lines.size()) b.samples.resize(b.lines.size());
  std::string where;
  for (const Batch::Line& l : b.lines) {
    where = source_name;
    where += ':';
    where += std::to_string(l.number);
    try {
      json_in::parse_sample(parser, b.text.data() + l.offset, l.size, where,
                            b.samples[b.parsed]);
    } catch (...) {
      // The read error found while filling (if any) comes later in the
      // file than this line: this one is reported.
      b.error = std::current_exception();
      b.last = true;
      return;
    }
    ++b.parsed;
  }
}

void ParallelSampleParser::work() {
  for (;;) {
    std::unique_ptr<Batch> b;
    {
      std::unique_lock lock(mu_);
      free_cv_.wait(lock, [&] { return stopping_ || !free_.empty(); });
      if (stopping_) return;
      b = std::move(free_.back());
      free_.pop_back();
    }
    {
      std::lock_guard source_lock(source_mu_);
      if (source_done_) {
        std::lock_guard lock(mu_);
        free_.push_back(std::move(b));
        return;
      }
      fill(*b);
    }
    parse(*b, source_.name());
    const uint64_t seq = b->seq;
    {
      std::lock_guard lock(mu_);
      parsed_.emplace(seq, std::move(b));
    }
    parsed_cv_.notify_all();
  }
}

bool ParallelSampleParser::next(Sample& out, size_t& line) {
  for (;;) {
    if (ended_) return false;
    if (current_ && current_->taken < current_->parsed) {
      const size_t i = current_->taken++;
      std::swap(out, current_->samples[i]);
      line = current_->lines[i].number;
      return true;
    }
    if (current_) {
      if (current_->last) {
        ended_ = true;
        if (current_->error) std::rethrow_exception(current_->error);
        return false;
      }
      {
        std::lock_guard lock(mu_);
        free_.push_back(std::move(current_));
      }
      free_cv_.notify_one();
    }
    std::unique_lock lock(mu_);
    parsed_cv_.wait(lock, [&] { return parsed_.count(next_seq_out_) > 0; });
    auto it = parsed_.find(next_seq_out_++);
    current_ = std::move(it->second);
    parsed_.erase(it);
  }
}

}  // namespace gd
