// `gpudoctor who`: a GPU's memory account (procmgmt/gpu_memory_account.h)
// as text and JSON.
#pragma once

#include <string>
#include <vector>

#include "procmgmt/gpu_memory_account.h"

namespace gd {

std::string render_who(const procmgmt::GpuMemoryAccount& a);
std::string who_to_json(const procmgmt::GpuMemoryAccount& a);

// `who` over several GPUs: the texts one blank line apart, what every GPU
// reset needs said once at the end when more than one GPU is to be reset;
// the JSON as {"gpus": [who_to_json, ...]}.
std::string render_who_list(
    const std::vector<procmgmt::GpuMemoryAccount>& accounts);
std::string who_list_to_json(
    const std::vector<procmgmt::GpuMemoryAccount>& accounts);

}  // namespace gd
