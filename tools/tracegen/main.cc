// gpudoctor-tracegen: writes a synthetic trace of one scenario.
//   gpudoctor-tracegen --scenario input-bound --gpus 8 --duration 24h
//       --interval 1s --processes 16 --seed 7 -o bench.jsonl.zst
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "common/duration.h"
#include "trace/trace_io.h"
#include "tracegen/tracegen.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Write a synthetic gpudoctor trace (trace-format.md) for one scenario"};
  std::string scenario, output, duration = "10m", interval = "1s";
  gd::tracegen::Options opt;
  bool list = false, quiet = false, json = false;
  app.add_flag("--list", list, "List the scenarios and exit");
  app.add_flag("--json", json,
               "With --list: one JSON array (name, description, min_gpus, "
               "fires, silent)");
  app.add_option("--scenario", scenario, "Scenario name (see --list)");
  app.add_option("--gpus", opt.gpus, "Number of GPUs")
      ->check(CLI::Range(1, 64));
  app.add_option("--duration", duration,
                 "Trace length: 600, 90s, 10m, 24h, 2d");
  app.add_option("--interval", interval, "Sample interval: 1s, 500ms, 5");
  app.add_option("--processes", opt.processes,
                 "Process entries per sample (0: the scenario's own layout)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--seed", opt.seed, "PRNG seed (same seed, same trace)");
  app.add_option("--start", opt.start_t, "Unix time of the first sample");
  app.add_option("-o,--output", output,
                 "Output file ('-' = stdout; .zst = zstd)");
  app.add_flag("-q,--quiet", quiet, "No summary on stderr");
  CLI11_PARSE(app, argc, argv);

  if (list && json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : gd::tracegen::scenarios())
      out.push_back({{"name", s.name},
                     {"description", s.description},
                     {"min_gpus", s.min_gpus},
                     {"fires", s.fires},
                     {"silent", s.silent}});
    fmt::print("{}\n", out.dump(1));
    return 0;
  }
  if (list) {
    for (const auto& s : gd::tracegen::scenarios()) {
      std::string fires, silent;
      for (const auto& f : s.fires) fires += (fires.empty() ? "" : ",") + f;
      for (const auto& f : s.silent) silent += (silent.empty() ? "" : ",") + f;
      fmt::print(
          "{:<24} {}{}\n{:<24} fires: {}; must not fire: {}\n", s.name,
          s.description,
          s.min_gpus > 1 ? fmt::format(" (needs >= {} GPUs)", s.min_gpus) : "",
          "", fires.empty() ? "-" : fires, silent.empty() ? "-" : silent);
    }
    return 0;
  }
  if (scenario.empty() || output.empty()) {
    fmt::print(
        stderr,
        "gpudoctor-tracegen: --scenario and -o are required (or --list)\n");
    return 2;
  }
  try {
    // A trace is at least one millisecond long and at most a year; one
    // sample a day is the sparsest interval that still makes a trace.
    opt.duration_s = gd::parse_duration_in(duration, {0.001, 365 * 86400.0});
    opt.interval_s = gd::parse_duration_in(interval, {0.001, 86400});
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpudoctor-tracegen: {}\n", e.what());
    return 2;  // a usage error
  }
  try {
    auto t0 = std::chrono::steady_clock::now();
    gd::tracegen::Generator gen(scenario, opt);
    gd::TraceWriter writer(output);
    writer.write_header(gen.header());
    gd::Sample sample;
    size_t n = 0;
    while (gen.next(sample)) {
      writer.write_sample(sample);
      ++n;
    }
    writer.close();
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    if (!quiet)
      fmt::print(stderr,
                 "gpudoctor-tracegen: {} samples of '{}' ({} GPUs) to {} in "
                 "{:.2f} s\n",
                 n, scenario, opt.gpus, output, s);
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpudoctor-tracegen: {}\n", e.what());
    return 1;
  }
  return 0;
}
