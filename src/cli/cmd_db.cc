// gpudoctor db check [--db PATH] [--json]: lists the corrupt blocks and
// pending batches of the history DB (and what SQLite's integrity check
// says). gpudoctor db repair [--db PATH]: moves them to quarantine.
// Exit codes: 0 clean (check) / healthy after repair, 1 problems found (or
// left after repair) or the DB cannot be read, 2 usage.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/full_binary.h"
#include "serve/serve_options.h"
#include "store/store_check.h"

namespace gd {
namespace {

nlohmann::json check_json(const std::string& path, const StoreCheck& c) {
  using nlohmann::json;
  json corrupt = json::array();
  for (const auto& r : c.corrupt)
    corrupt.push_back({{"table", r.table},
                       {"id", r.id},
                       {"t0", r.t0 ? json(*r.t0) : json(nullptr)},
                       {"t1", r.t1 ? json(*r.t1) : json(nullptr)},
                       {"why", r.why}});
  return {{"db", path},
          {"clean", c.clean()},
          {"blocks", c.blocks},
          {"pending_batches", c.batches},
          {"corrupt", corrupt},
          {"integrity_errors", c.integrity_errors},
          {"quarantined_rows", c.quarantined_rows},
          {"repaired", c.repaired}};
}

void print_check(const std::string& path, const StoreCheck& c) {
  for (const auto& r : c.corrupt) {
    if (r.t0)
      std::printf("corrupt %s id=%lld t0=%.3f t1=%.3f: %s\n", r.table.c_str(),
                  static_cast<long long>(r.id), *r.t0, r.t1.value_or(0),
                  r.why.c_str());
    else
      std::printf("corrupt %s seq=%lld: %s\n", r.table.c_str(),
                  static_cast<long long>(r.id), r.why.c_str());
  }
  for (const auto& e : c.integrity_errors)
    std::printf("integrity: %s\n", e.c_str());
  std::printf(
      "%s: %zu blocks, %zu pending batches, %zu corrupt, %zu integrity "
      "errors, %lld rows in quarantine%s\n",
      path.c_str(), c.blocks, c.batches, c.corrupt.size(),
      c.integrity_errors.size(), static_cast<long long>(c.quarantined_rows),
      c.clean() ? " -- clean" : "");
}

void add_db_command(CLI::App& app, const GlobalOptions&) {
  auto* db = app.add_subcommand(kDbCommand.name, kDbCommand.summary);
  db->require_subcommand(1);
  struct Opts {
    std::string path;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  const std::string db_help =
      "history database (default: serve's, /var/lib/gpudoctor/history.db as "
      "root)";

  auto* check = db->add_subcommand(
      "check", "list corrupt blocks and batches (read-only); exit 1 if any");
  check->add_option("--db", o->path, db_help);
  check->add_flag("--json", o->json, "print the result as JSON");
  check->callback([o] {
    std::string path = o->path.empty() ? default_db_path() : o->path;
    StoreCheck c = check_store(path);
    if (o->json)
      std::printf("%s\n", check_json(path, c).dump().c_str());
    else
      print_check(path, c);
    command_exit_code() = c.clean() ? kExitOk : kExitError;
  });

  auto* repair = db->add_subcommand(
      "repair",
      "move corrupt blocks and batches to quarantine (stop serve first)");
  repair->add_option("--db", o->path, db_help);
  repair->add_flag("--json", o->json,
                   "print the result as JSON (db check's, with `repaired`)");
  repair->callback([o] {
    std::string path = o->path.empty() ? default_db_path() : o->path;
    StoreCheck c = repair_store(path);
    if (o->json) {
      std::printf("%s\n", check_json(path, c).dump().c_str());
    } else {
      std::printf("%s: moved %zu corrupt row(s) to quarantine\n", path.c_str(),
                  c.repaired);
      print_check(path, c);
    }
    command_exit_code() = c.clean() ? kExitOk : kExitError;
  });
}

}  // namespace

GD_REGISTER_NAMED_COMMAND(kDbCommand.order, kDbCommand.name, add_db_command);

}  // namespace gd
