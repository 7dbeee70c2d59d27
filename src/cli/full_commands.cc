// The lean gpudoctor's serve, export and db: the same names and summaries
// in --help, and every argument (--help included) handed to gpudoctor-full
// (full_binary.h).
#include "cli/commands.h"
#include "cli/full_binary.h"

namespace gd {
namespace {

void add_forwarder(CLI::App& app, const FullOnlyCommand& c) {
  auto* cmd = app.add_subcommand(c.name, c.summary);
  // Nothing is parsed here: gpudoctor-full parses the whole command line,
  // and prints this command's own --help.
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->fallthrough(false);  // --help too: not the app's, gpudoctor-full's
  cmd->callback([name = c.name] { exec_full_binary(name); });
}

void add_serve_forwarder(CLI::App& app, const GlobalOptions&) {
  add_forwarder(app, kServeCommand);
}
void add_export_forwarder(CLI::App& app, const GlobalOptions&) {
  add_forwarder(app, kExportCommand);
}
void add_db_forwarder(CLI::App& app, const GlobalOptions&) {
  add_forwarder(app, kDbCommand);
}

}  // namespace

GD_REGISTER_COMMAND(kServeCommand.order, add_serve_forwarder);
GD_REGISTER_COMMAND(kExportCommand.order, add_export_forwarder);
GD_REGISTER_COMMAND(kDbCommand.order, add_db_forwarder);

}  // namespace gd
