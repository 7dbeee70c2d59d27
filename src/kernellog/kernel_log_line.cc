// parse_kernel_log_line: one log line -> an xid or oom_kill event.
#include "common/text_cap.h"
#include "kernellog/kernel_log.h"
#include "kernellog/log_line_prefix.h"
#include "kernellog/oom_line.h"
#include "kernellog/xid_line.h"

namespace gd {

namespace {

// The event keeps at most kKernelLineMax bytes of the line, and says how
// much it left out.
std::string capped_text(std::string_view text) {
  std::string out(text.substr(0, kKernelLineMax));
  if (text.size() > kKernelLineMax)
    cap_text(out, kKernelLineMax, text.size() - kKernelLineMax);
  return out;
}

}  // namespace

std::optional<Event> parse_kernel_log_line(std::string_view line,
                                           const PciIndex& pci) {
  // The event text is the line as the user would see it in dmesg/journal,
  // trimmed; a raw /dev/kmsg record loses only its "PRI,SEQ,USEC,FLAGS;"
  // header, which is bookkeeping, not part of the message.
  std::string_view text = kernellog::trim_blanks(line);
  text.remove_prefix(kernellog::kmsg_header_length(text));
  std::string_view msg = kernellog::kernel_message(text);

  if (auto x = kernellog::parse_xid(msg)) {
    Event e;
    e.kind = "xid";
    e.gpu = pci.find(x->pci);
    e.code = x->code;
    if (x->pid) e.pid = *x->pid;
    e.text = capped_text(text);
    return e;
  }
  if (auto o = kernellog::parse_oom_kill(msg)) {
    Event e;
    e.kind = "oom_kill";
    e.pid = o->pid;
    e.text = capped_text(text);
    return e;
  }
  return std::nullopt;
}

}  // namespace gd
