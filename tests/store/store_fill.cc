// gd_store_fill --db PATH --trace FILE [--batch N] [--maintain NOW]
// [--roll-up]: stores a trace in a history DB the way `gpudoctor serve --db`
// does (set_header, append per sample, flush), for tests of `gpudoctor export`.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "store/history_store.h"
#include "trace/trace_io.h"

int main(int argc, char** argv) {
  CLI::App app{"store a trace in a gpudoctor history DB (test helper)"};
  gd::StoreOptions o;
  std::string trace;
  double maintain_now = 0;
  app.add_option("--db", o.path, "history DB")->required();
  app.add_option("--trace", trace, "trace to store")->required();
  app.add_option("--batch", o.batch_samples, "samples per transaction");
  app.add_option("--retention", o.retention_s, "seconds kept");
  app.add_option("--maintain", maintain_now,
                 "run maintain(NOW) at the end (Unix time)");
  bool roll_up = false;
  app.add_flag("--roll-up", roll_up,
               "roll every raw block up into minute averages at the end, as "
               "a serve running meanwhile would have");
  CLI11_PARSE(app, argc, argv);
  try {
    gd::TraceReader reader(trace);
    auto store = gd::HistoryStore::open(o);
    store->set_header(reader.header());
    gd::Sample s;
    size_t n = 0;
    double last_t = 0;
    while (reader.next(s)) {
      store->append(s);
      last_t = s.t;
      ++n;
    }
    store->flush();
    if (maintain_now > 0) store->maintain(maintain_now);
    // maintain() rolls up 12 raw blocks a call: a day is 144.
    if (roll_up)
      for (size_t i = 0; i <= n / 7200 + 1; ++i) store->maintain(last_t + 1);
    std::fprintf(stderr, "gd_store_fill: %zu samples into %s\n", n,
                 o.path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gd_store_fill: %s\n", e.what());
    return 1;
  }
  return 0;
}
