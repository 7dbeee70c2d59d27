#include "api/sample_event_json.h"

#include <stdexcept>

#include "api/json_read.h"
#include "trace/json_out.h"
#include "trace/trace_io.h"

namespace gd::api {
namespace {

namespace jo = json_out;

constexpr const char* kSampleEventWhat = "sample event";
constexpr size_t kMaxShares = 1024;

uint64_t bytes_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned())
    throw std::runtime_error(std::string(kSampleEventWhat) + ": '" + key +
                             "' is not a byte count");
  return it->get<uint64_t>();
}

}  // namespace

void append_sample_event_json(std::string& out, const Sample& sample,
                              const std::vector<GpuMemoryShare>& memory) {
  jo::lit(out, "{\"sample\":");
  append_sample_json(out, sample);
  jo::lit(out, ",\"memory\":[");
  for (size_t i = 0; i < memory.size(); ++i) {
    const GpuMemoryShare& m = memory[i];
    if (i) out += ',';
    jo::lit(out, "{\"gpu\":");
    jo::integer(out, m.gpu);
    jo::lit(out, ",\"live_process_bytes\":");
    jo::unsigned_integer(out, m.live_process_bytes);
    jo::lit(out, ",\"unowned_bytes\":");
    jo::unsigned_integer(out, m.unowned_bytes);
    out += '}';
  }
  jo::lit(out, "]}");
}

SampleEvent parse_sample_event_json(std::string_view data) {
  const nlohmann::json j = parse_object(data, kSampleEventWhat);
  const auto sample = j.find("sample");
  if (sample == j.end() || !sample->is_object())
    throw std::runtime_error(std::string(kSampleEventWhat) +
                             ": no 'sample' object");
  SampleEvent e;
  e.sample = sample_from_json(sample->dump(), kSampleEventWhat);
  const auto memory = j.find("memory");
  if (memory == j.end() || !memory->is_array())
    throw std::runtime_error(std::string(kSampleEventWhat) +
                             ": no 'memory' array");
  if (memory->size() > kMaxShares)
    throw std::runtime_error(std::string(kSampleEventWhat) + ": more than " +
                             std::to_string(kMaxShares) + " memory entries");
  for (const auto& m : *memory) {
    if (!m.is_object())
      throw std::runtime_error(std::string(kSampleEventWhat) +
                               ": a memory entry is not an object");
    GpuMemoryShare s;
    auto gpu = optional_integer(m, "gpu", 0, kMaxGpu, kSampleEventWhat);
    if (!gpu)
      throw std::runtime_error(std::string(kSampleEventWhat) +
                               ": a memory entry has no 'gpu'");
    s.gpu = static_cast<int>(*gpu);
    s.live_process_bytes = bytes_of(m, "live_process_bytes");
    s.unowned_bytes = bytes_of(m, "unowned_bytes");
    e.memory.push_back(s);
  }
  return e;
}

}  // namespace gd::api
