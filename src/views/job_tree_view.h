// `gpudoctor ps --tree`: the job trees of procmgmt/job_tree.h as text and
// JSON.
#pragma once

#include <string>
#include <vector>

#include "model/sample.h"
#include "procmgmt/job_tree.h"

namespace gd {

std::string render_job_trees(const Sample& sample,
                             const std::vector<procmgmt::JobTree>& trees);
std::string job_trees_to_json(const Sample& sample,
                              const std::vector<procmgmt::JobTree>& trees);

}  // namespace gd
