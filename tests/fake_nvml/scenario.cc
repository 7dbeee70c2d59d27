#include "scenario.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "trace/trace_io.h"

namespace fake_nvml {

Scenario::Scenario(gd::TraceHeader header, std::vector<double> offsets_s,
                   std::vector<std::vector<gd::GpuSample>> gpus, bool loop)
    : header_(std::move(header)),
      offsets_(std::move(offsets_s)),
      gpus_(std::move(gpus)),
      loop_(loop) {
  if (offsets_.size() != gpus_.size()) {
    throw std::invalid_argument(
        "scenario: offsets and samples differ in count");
  }
}

Scenario Scenario::load(const std::string& path) {
  gd::TraceReader reader(path);
  std::vector<double> offsets;
  std::vector<std::vector<gd::GpuSample>> gpus;
  gd::Sample s;
  double first_t = 0;
  while (reader.next(s)) {
    if (offsets.empty()) first_t = s.t;
    double off = s.t - first_t;
    if (!offsets.empty() && off < offsets.back()) {
      throw std::runtime_error(path + ":" + std::to_string(reader.line()) +
                               ": sample time goes backwards");
    }
    offsets.push_back(off);
    gpus.push_back(std::move(s.gpus));
    s = gd::Sample{};
  }
  Scenario out(reader.header(), std::move(offsets), std::move(gpus),
               header_loop_flag(path));
  out.set_ended_processes_free_memory(
      header_flag(path, "ended_processes_free_memory"));
  return out;
}

double Scenario::period_s() const {
  if (offsets_.empty()) return 0;
  if (offsets_.size() == 1) return 1.0;
  double last_interval = offsets_.back() - offsets_[offsets_.size() - 2];
  return offsets_.back() + (last_interval > 0 ? last_interval : 1.0);
}

std::optional<size_t> Scenario::sample_at(double s) const {
  if (offsets_.empty()) return std::nullopt;
  if (s < 0) s = 0;
  if (loop_) s = std::fmod(s, period_s());
  // First offset > s, then step back one: the latest offset <= s.
  auto it = std::upper_bound(offsets_.begin(), offsets_.end(), s);
  return static_cast<size_t>(it - offsets_.begin()) - 1;
}

const gd::GpuSample* Scenario::gpu(size_t sample, int gpu_index) const {
  if (sample >= gpus_.size()) return nullptr;
  for (const auto& g : gpus_[sample]) {
    if (g.index == gpu_index) return &g;
  }
  return nullptr;
}

bool header_loop_flag(const std::string& path) {
  return header_flag(path, "loop");
}

namespace {
bool ended(uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return true;
  auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ||
         stat[close + 2] == 'Z';
}
}  // namespace

gd::GpuSample without_ended_processes(const gd::GpuSample& gpu) {
  gd::GpuSample out = gpu;
  if (!out.processes) return out;
  uint64_t freed = 0;
  std::erase_if(*out.processes, [&](const gd::GpuProcess& p) {
    if (!ended(p.pid)) return false;
    freed += p.used_bytes.value_or(0);
    return true;
  });
  if (out.mem_used_bytes)
    *out.mem_used_bytes -= std::min(*out.mem_used_bytes, freed);
  return out;
}

bool header_flag(const std::string& path, const char* name) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  // A zstd frame starts with 28 B5 2F FD; such a header is not plain JSON.
  if (line.size() >= 4 && static_cast<unsigned char>(line[0]) == 0x28 &&
      static_cast<unsigned char>(line[1]) == 0xB5) {
    return false;
  }
  auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  auto it = j.find(name);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace fake_nvml
