// Static host facts for the trace header: CPU model and count from
// /proc/cpuinfo, and whether we run in the initial PID namespace.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd::procfs {

struct CpuInfo {
  std::string model;              // "" when the file names none
  std::optional<int> processors;  // number of "processor" entries
};

// x86 prints "model name"; arm64 prints no model name, so "Hardware" and
// "Model" (Raspberry Pi, some SoCs) are used as fallbacks.
CpuInfo parse_cpuinfo(std::string_view text);

// Inode of the initial PID namespace: PROC_PID_INIT_INO in
// include/linux/proc_ns.h, fixed since Linux 3.8.
inline constexpr unsigned long long kInitialPidNsInode =
    0xEFFFFFFCull;  // 4026531836

// "pid:[4026531836]" (readlink of /proc/self/ns/pid) -> 4026531836.
std::optional<unsigned long long> parse_ns_link(std::string_view link);

// Number of entries on the "NSpid:" line of /proc/<pid>/status.
std::optional<int> parse_nspid_depth(std::string_view status_text);

// Decides "host" or "container" ("" when neither signal is available).
//
// Comparing /proc/self/ns/pid with /proc/1/ns/pid does not work: inside a
// container pid 1 is the container's init, in the same namespace as us, and
// reading pid 1's ns link needs privileges anyway. The initial namespace
// has a fixed inode, so our own link is enough. NSpid is a second signal:
// more than one entry means we are nested below the namespace of the /proc
// mount, i.e. certainly not in the host namespace. (NSpid with one entry
// proves nothing: a container that mounts its own /proc sees one entry.)
std::string decide_pid_namespace(
    std::optional<unsigned long long> self_ns_inode,
    std::optional<int> nspid_depth);

}  // namespace gd::procfs
