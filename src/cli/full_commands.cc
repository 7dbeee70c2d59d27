// The lean gpudoctor's serve, export, report, db, man and completion: the same
// names and summaries in --help, and every argument (--help included) handed to
// gpudoctor-full (full_binary.h).
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

// One registration function per command, made from its constant.
template <const FullOnlyCommand& C>
void add_forwarder_of(CLI::App& app, const GlobalOptions&) {
  add_forwarder(app, C);
}

}  // namespace

// Named (commands.h): `serve` and the others hand over at once, without
// building every command's flags first. `man` and `completion` are not:
// gpudoctor-full makes them from every command.
static const CommandRegistration gd_serve_forwarder(
    kServeCommand.order, add_forwarder_of<kServeCommand>, kServeCommand.name);
static const CommandRegistration gd_export_forwarder(
    kExportCommand.order, add_forwarder_of<kExportCommand>,
    kExportCommand.name);
static const CommandRegistration gd_report_forwarder(
    kReportCommand.order, add_forwarder_of<kReportCommand>,
    kReportCommand.name);
static const CommandRegistration gd_db_forwarder(kDbCommand.order,
                                                 add_forwarder_of<kDbCommand>,
                                                 kDbCommand.name);
static const CommandRegistration gd_man_forwarder(
    kManCommand.order, add_forwarder_of<kManCommand>);
static const CommandRegistration gd_completion_forwarder(
    kCompletionCommand.order, add_forwarder_of<kCompletionCommand>);

}  // namespace gd
