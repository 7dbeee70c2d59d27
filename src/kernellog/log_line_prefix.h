// Strips what the various log tools put in front of a kernel message:
//   dmesg            "[  123.456789] MSG", "[Fri Aug 30 11:43:09 2024] MSG"
//   syslog/journal   "Jun 30 11:07:05 host kernel: MSG",
//                    "Dec  2 11:38:47 host kernel: [  219.47] MSG",
//                    "Mar 29 15:38:59 kernel: MSG" (no host; any month
//                    language, e.g. Polish "kwi")
//   /dev/kmsg        "6,1234,5678901,-;MSG" (priority,seq,usec,flags;)
//   bare             "MSG"
#pragma once

#include <optional>
#include <string_view>

namespace gd::kernellog {

// The message part of `line` (trimmed); `line` itself when no prefix known.
std::string_view kernel_message(std::string_view line);

// The /dev/kmsg record header "PRI,SEQ,USEC,FLAGS[,...];" if the line starts
// with one, else 0: the number of characters to drop.
size_t kmsg_header_length(std::string_view line);

// Seconds since boot that `line` was logged at, from a /dev/kmsg record's
// USEC field or dmesg's "[  123.456789]" stamp (also after a syslog
// "kernel: " tag); nullopt for a line without one (dmesg -T, a bare line).
std::optional<double> line_uptime_s(std::string_view line);

}  // namespace gd::kernellog
