// `gpudoctor who`: a GPU's memory account (procmgmt/gpu_memory_account.h)
// as text and JSON.
#pragma once

#include <string>

#include "procmgmt/gpu_memory_account.h"

namespace gd::procmgmt {

std::string render_who(const GpuMemoryAccount& a);
std::string who_to_json(const GpuMemoryAccount& a);

}  // namespace gd::procmgmt
