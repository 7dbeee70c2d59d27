#include <simdjson.h>

#include "trace/json_in.h"
#include "trace/line_source.h"
#include "trace/parallel_parse.h"
#include "trace/trace_checks.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

static_assert(LineSource::kPadding >= simdjson::SIMDJSON_PADDING);

// What sample_from_json, sample_fields_from_json and header_from_json keep
// on a thread between calls: the parsers, and the copy of the line with
// simdjson's padding (they get arbitrary views).
struct ThreadBuffers {
  simdjson::dom::parser parser;
  simdjson::ondemand::parser field_parser;
  std::string padded;
};

ThreadBuffers& thread_buffers() {
  thread_local ThreadBuffers buffers;
  return buffers;
}

simdjson::dom::parser& thread_parser() { return thread_buffers().parser; }

const char* padded_copy(std::string_view line) {
  std::string& buf = thread_buffers().padded;
  buf.assign(line);
  buf.resize(line.size() + simdjson::SIMDJSON_PADDING, ' ');
  return buf.data();
}

}  // namespace

TraceHeader header_from_json(std::string_view line, const std::string& where) {
  return json_in::parse_header(thread_parser(), padded_copy(line), line.size(),
                               where);
}

void sample_from_json(std::string_view line, const std::string& where,
                      Sample& out) {
  json_in::parse_sample(thread_parser(), padded_copy(line), line.size(), where,
                        out, ProcessBudget{});
}

void sample_fields_from_json(std::string_view line, const std::string& where,
                             const SampleFields& fields, Sample& out) {
  const json_in::SampleFieldsReader reader(fields, ProcessBudget{});
  reader.parse(thread_buffers().field_parser, thread_parser(),
               padded_copy(line), line.size(), where, out);
}

void release_thread_json_buffers() { thread_buffers() = ThreadBuffers(); }

Sample sample_from_json(std::string_view line, const std::string& where) {
  Sample s;
  sample_from_json(line, where, s);
  return s;
}

struct TraceReader::Impl {
  Impl(const std::string& path, const TraceReader::Options& options)
      : source(path), budget(options.process_budget) {
    if (options.fields)
      fields = std::make_unique<json_in::SampleFieldsReader>(*options.fields,
                                                             budget);
  }

  // "FILE:LINE" of the last line read (of the last sample handed out).
  std::string where() const {
    const size_t line = parallel ? parallel_line : source.line_number();
    return source.name() + ":" + std::to_string(line);
  }

  // Next non-blank line; false at end of input.
  bool next_line(std::string_view& line) {
    while (source.next(line)) {
      if (!LineSource::is_blank(line)) return true;
    }
    return false;
  }

  LineSource source;
  ProcessBudget budget;
  simdjson::dom::parser parser;
  // With Options::fields: what reads each line, and its parser.
  std::unique_ptr<json_in::SampleFieldsReader> fields;
  simdjson::ondemand::parser fields_parser;
  TraceHeader header;
  bool have_previous = false;
  double previous_t = 0;
  std::unique_ptr<ParallelSampleParser> parallel;  // with parse_threads > 0
  size_t parallel_line = 0;  // line of the last sample it handed out
};

TraceReader::TraceReader(const std::string& path, Options options)
    : impl_(std::make_unique<Impl>(path, options)) {
  std::string_view line;
  if (!impl_->next_line(line)) {
    throw TraceError(impl_->source.name() +
                     ": empty file: a trace starts with a header line");
  }
  // Editors on Windows start UTF-8 files with a byte order mark; it is not
  // part of the JSON (RFC 8259 lets a parser ignore it), so skip it.
  constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
  if (line.substr(0, kUtf8Bom.size()) == kUtf8Bom)
    line.remove_prefix(kUtf8Bom.size());
  impl_->header = json_in::parse_header(impl_->parser, line.data(), line.size(),
                                        impl_->where());
  if (options.parse_threads > 0)
    impl_->parallel = std::make_unique<ParallelSampleParser>(
        impl_->source, options.parse_threads, options.process_budget,
        impl_->fields.get());
}

TraceReader::~TraceReader() = default;

const TraceHeader& TraceReader::header() const { return impl_->header; }

size_t TraceReader::line() const {
  return impl_->parallel ? impl_->parallel_line : impl_->source.line_number();
}

bool TraceReader::next(Sample& out) {
  if (impl_->parallel) {
    if (!impl_->parallel->next(out, impl_->parallel_line)) return false;
  } else {
    std::string_view line;
    if (!impl_->next_line(line)) return false;
    if (impl_->fields)
      impl_->fields->parse(impl_->fields_parser, impl_->parser, line.data(),
                           line.size(), impl_->where(), out);
    else
      json_in::parse_sample(impl_->parser, line.data(), line.size(),
                            impl_->where(), out, impl_->budget);
    // simdjson keeps buffers sized for the longest line it parsed (about
    // ten bytes per byte of it): after a huge line, start afresh.
    if (impl_->parser.capacity() > ParallelSampleParser::kBatchBytes * 4)
      impl_->parser = simdjson::dom::parser();
    if (impl_->fields_parser.capacity() > ParallelSampleParser::kBatchBytes * 4)
      impl_->fields_parser = simdjson::ondemand::parser();
  }
  if (impl_->have_previous && out.t < impl_->previous_t)
    trace_checks::check_time_order(out.t, impl_->previous_t, impl_->where());
  impl_->have_previous = true;
  impl_->previous_t = out.t;
  return true;
}

}  // namespace gd
