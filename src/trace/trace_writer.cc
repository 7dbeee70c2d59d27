#include <cmath>

#include "trace/json_out.h"
#include "trace/line_sink.h"
#include "trace/trace_io.h"

namespace gd {

struct TraceWriter::Impl {
  explicit Impl(const std::string& path) : sink(path) {}
  void check_open() const {
    if (sink.closed()) throw TraceError(sink.name() + ": writer is closed");
  }
  LineSink sink;
  bool header_written = false;
  bool have_previous = false;
  double previous_t = 0;
};

TraceWriter::TraceWriter(const std::string& path)
    : impl_(std::make_unique<Impl>(path)) {}

TraceWriter::~TraceWriter() {
  try {
    close();
  } catch (const TraceError&) {
    // A destructor cannot report it; callers that care call close().
  }
}

void TraceWriter::write_header(const TraceHeader& h) {
  impl_->check_open();
  if (impl_->header_written) {
    throw TraceError(impl_->sink.name() + ": the header is already written");
  }
  std::string& out = impl_->sink.buffer();
  const size_t mark = out.size();
  try {
    append_header_json(out, h);
  } catch (...) {
    out.resize(mark);  // never leave half a line behind
    throw;
  }
  out.push_back('\n');
  impl_->header_written = true;
  impl_->sink.wrote();
}

void TraceWriter::write_sample(const Sample& s) {
  impl_->check_open();
  const std::string& name = impl_->sink.name();
  if (!impl_->header_written) {
    throw TraceError(name + ": write_header must come before samples");
  }
  if (impl_->have_previous && s.t < impl_->previous_t) {
    std::string msg = name + ": sample t ";
    json_out::number(msg, s.t);
    msg += " is earlier than the previous one, ";
    json_out::number(msg, impl_->previous_t);
    throw TraceError(msg);
  }
  std::string& out = impl_->sink.buffer();
  const size_t mark = out.size();
  try {
    append_sample_json(out, s);
  } catch (const TraceError& e) {
    out.resize(mark);
    throw TraceError(name + ": " + e.what());
  }
  out.push_back('\n');
  impl_->have_previous = true;
  impl_->previous_t = s.t;
  impl_->sink.wrote();
}

void TraceWriter::flush() { impl_->sink.flush(); }

void TraceWriter::close() { impl_->sink.close(); }

}  // namespace gd
