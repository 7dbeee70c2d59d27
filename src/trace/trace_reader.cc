#include <simdjson.h>

#include "trace/json_in.h"
#include "trace/line_source.h"
#include "trace/trace_checks.h"
#include "trace/trace_io.h"

namespace gd {
namespace {

static_assert(LineSource::kPadding >= simdjson::SIMDJSON_PADDING);

bool is_blank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

// sample_from_json/header_from_json get arbitrary views: copy them to a
// buffer with simdjson's padding.
simdjson::dom::parser& thread_parser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

const char* padded_copy(std::string_view line) {
  thread_local std::string buf;
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
                        out);
}

Sample sample_from_json(std::string_view line, const std::string& where) {
  Sample s;
  sample_from_json(line, where, s);
  return s;
}

struct TraceReader::Impl {
  explicit Impl(const std::string& path) : source(path) {}

  std::string where() const {
    return source.name() + ":" + std::to_string(source.line_number());
  }

  // Next non-blank line; false at end of input.
  bool next_line(std::string_view& line) {
    while (source.next(line)) {
      if (!is_blank(line)) return true;
    }
    return false;
  }

  LineSource source;
  simdjson::dom::parser parser;
  TraceHeader header;
  bool have_previous = false;
  double previous_t = 0;
};

TraceReader::TraceReader(const std::string& path)
    : impl_(std::make_unique<Impl>(path)) {
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
}

TraceReader::~TraceReader() = default;

const TraceHeader& TraceReader::header() const { return impl_->header; }

size_t TraceReader::line() const { return impl_->source.line_number(); }

bool TraceReader::next(Sample& out) {
  std::string_view line;
  if (!impl_->next_line(line)) return false;
  const std::string where = impl_->where();
  json_in::parse_sample(impl_->parser, line.data(), line.size(), where, out);
  if (impl_->have_previous)
    trace_checks::check_time_order(out.t, impl_->previous_t, where);
  impl_->have_previous = true;
  impl_->previous_t = out.t;
  return true;
}

}  // namespace gd
