#include "trace/parallel_parse.h"

#include <simdjson.h>

#include <utility>

#include "trace/json_in.h"

namespace gd {

ParallelSampleParser::ParallelSampleParser(
    LineSource& source, int threads, const ProcessBudget& budget,
    const json_in::SampleFieldsReader* fields)
    : source_(source), budget_(budget), fields_(fields) {
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
  long_cv_.notify_all();
  for (auto& w : workers_) w.join();
}

bool ParallelSampleParser::take_long_line(Batch& b) {
  std::unique_lock lock(mu_);
  long_cv_.wait(lock, [&] { return stopping_ || !long_line_out_; });
  if (stopping_) return false;
  long_line_out_ = b.holds_long = true;
  return true;
}

void ParallelSampleParser::release(std::unique_ptr<Batch> b) {
  if (b->holds_long) {
    b->holds_long = false;
    long_line_out_ = false;
    long_cv_.notify_all();
  }
  free_.push_back(std::move(b));
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
    while (b.lines.size() < kBatchLines && b.text.size() < kBatchBytes) {
      if (!source_.next(line)) {
        b.last = true;
        break;
      }
      if (LineSource::is_blank(line)) continue;
      if (line.size() > kBatchBytes && !take_long_line(b)) {
        b.last = true;  // stopping: nobody reads this batch
        break;
      }
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

void ParallelSampleParser::parse(Batch& b) {
  thread_local simdjson::dom::parser parser;
  thread_local simdjson::ondemand::parser fields_parser;
  const std::string& source_name = source_.name();
  if (b.samples.size() < b.lines.size()) b.samples.resize(b.lines.size());
  std::string where;
  for (const Batch::Line& l : b.lines) {
    where = source_name;
    where += ':';
    where += std::to_string(l.number);
    try {
      if (fields_)
        fields_->parse(fields_parser, parser, b.text.data() + l.offset, l.size,
                       where, b.samples[b.parsed]);
      else
        json_in::parse_sample(parser, b.text.data() + l.offset, l.size, where,
                              b.samples[b.parsed], budget_);
    } catch (...) {
      // The read error found while filling (if any) comes later in the
      // file than this line: this one is reported.
      b.error = std::current_exception();
      b.last = true;
      return;
    }
    ++b.parsed;
  }
  // simdjson keeps buffers sized for the longest line it parsed (about ten
  // bytes per byte of it), and the batch its text: after a huge line, both
  // start afresh.
  if (parser.capacity() > 4 * kBatchBytes) parser = simdjson::dom::parser();
  if (fields_parser.capacity() > 4 * kBatchBytes)
    fields_parser = simdjson::ondemand::parser();
  if (b.text.capacity() > 4 * kBatchBytes) std::string().swap(b.text);
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
        release(std::move(b));
        return;
      }
      fill(*b);
    }
    parse(*b);
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
        release(std::move(current_));
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
