// gd_store_fill --db PATH --trace FILE [--batch N] [--maintain NOW]: stores a
// trace in a history DB the way `gpudoctor serve --db` does (set_header,
// append per sample, flush), for tests of `gpudoctor export`.
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
  CLI11_PARSE(app, argc, argv);
  try {
    gd::TraceReader reader(trace);
    auto store = gd::HistoryStore::open(o);
    store->set_header(reader.header());
    gd::Sample s;
    size_t n = 0;
    while (reader.next(s)) {
      store->append(s);
      ++n;
    }
    store->flush();
    if (maintain_now > 0) store->maintain(maintain_now);
    std::fprintf(stderr, "gd_store_fill: %zu samples into %s\n", n,
                 o.path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gd_store_fill: %s\n", e.what());
    return 1;
  }
  return 0;
}
