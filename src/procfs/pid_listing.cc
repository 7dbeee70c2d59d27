#include "procfs/pid_listing.h"

#include <dirent.h>

#include <algorithm>

#include "procfs/text_util.h"

namespace gd::procfs {

bool for_each_pid(const std::string& proc_root,
                  const std::function<void(uint32_t)>& fn) {
  DIR* dir = opendir(proc_root.c_str());
  if (!dir) return false;
  while (dirent* e = readdir(dir))
    if (auto pid = pid_of_entry(e->d_name)) fn(*pid);
  closedir(dir);
  return true;
}

std::vector<uint32_t> list_pids(const std::string& proc_root) {
  std::vector<uint32_t> pids;
  for_each_pid(proc_root, [&](uint32_t pid) { pids.push_back(pid); });
  std::sort(pids.begin(), pids.end());
  return pids;
}

}  // namespace gd::procfs
