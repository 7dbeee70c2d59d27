// gpudoctor record -o FILE [--duration 10m]: writes a trace (trace-format.md).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "collect/sampler.h"
#include "common/bytes_text.h"
#include "common/elapsed_text.h"
#include "model/process_budget.h"
#include "trace/trace_io.h"
#include "views/format.h"

namespace gd {
namespace {

std::atomic<bool> g_record_stop{false};
extern "C" void on_stop_signal(int) { g_record_stop.store(true); }

// Sleeps until `when` or until a stop signal, whichever comes first; short
// naps keep Ctrl-C responsive without needing a signal-safe wakeup channel.
void sleep_until_or_stopped(std::chrono::steady_clock::time_point when) {
  while (!g_record_stop.load() && std::chrono::steady_clock::now() < when)
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(50),
        when - std::chrono::steady_clock::now()));
}

}  // namespace

void add_record_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "record", "write a trace (trace-format.md); Ctrl-C ends it cleanly");
  struct Opts {
    std::string out;
    double duration_s = 0;  // 0 = until stopped
    long count = 0;         // 0 = unlimited
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("-o,--output", o->out,
                  "trace file ('-' = stdout; a .zst name is compressed)")
      ->required();
  // Unset = until Ctrl-C; a given duration is at least one sample's worth.
  add_duration_option(*cmd, "--duration", o->duration_s, {1, 30 * 86400.0},
                      "stop after this long, e.g. 10m (default: until Ctrl-C)");
  cmd->add_option("--count", o->count, "stop after this many samples")
      ->transform(decimal_in(0, 1'000'000'000));
  cmd->callback([&global, o] {
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    Sampler sampler(global.sampler_options());
    TraceWriter writer(o->out);
    writer.write_header(sampler.header());
    writer.flush();

    using clock = std::chrono::steady_clock;
    auto interval = std::chrono::duration_cast<clock::duration>(
        std::chrono::duration<double>(global.interval_s));
    auto start = clock::now();
    auto next = start + interval;
    long written = 0;
    // On a terminal, what is recorded so far, as diagnose shows its
    // sampling: once a second at most, on one line, erased at the end.
    const bool progress = o->out != "-" && isatty(fileno(stderr));
    auto shown = start - std::chrono::seconds(1);
    auto show_progress = [&] {
      if (!progress || clock::now() - shown < std::chrono::seconds(1)) return;
      shown = clock::now();
      std::error_code ec;
      const auto bytes = std::filesystem::file_size(o->out, ec);
      std::fprintf(
          stderr,
          "\rgpudoctor: recording: %ld samples, %s, %s (Ctrl-C to "
          "stop)\033[K",
          written, ec ? "?" : human_bytes(bytes).c_str(),
          elapsed_compact(std::chrono::duration<double>(shown - start).count())
              .c_str());
    };
    while (!g_record_stop.load()) {
      sleep_until_or_stopped(next);
      if (g_record_stop.load()) break;
      // serve's budget: a trace keeps what a reader of it would keep.
      Sample s = sampler.sample();
      apply_process_budget(s, ProcessBudget{});
      writer.write_sample(s);
      writer.flush();  // a killed recorder still leaves a valid trace
      ++written;
      show_progress();
      if (o->count && written >= o->count) break;
      if (o->duration_s > 0 &&
          std::chrono::duration<double>(clock::now() - start).count() >=
              o->duration_s)
        break;
      next += interval;
      if (next < clock::now()) next = clock::now();  // fell behind: no burst
    }
    writer.close();
    if (progress) std::fprintf(stderr, "\r\033[K");
    if (o->out != "-")
      std::fprintf(stderr, "gpudoctor: recorded %ld samples to %s\n", written,
                   o->out.c_str());
    command_exit_code() = kExitOk;
  });
}

GD_REGISTER_NAMED_COMMAND(60, "record", add_record_command);

}  // namespace gd
