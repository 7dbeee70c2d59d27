// The Slurm node serve runs on, as scontrol shows and changes it: its state
// and reason (`scontrol show node -o NAME`), drain and resume (`scontrol
// update nodename=NAME state=...`). Every call has a deadline; a slow or
// absent slurmctld makes a call fail, never hang.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd {

struct SlurmNodeState {
  std::string state;   // State= as scontrol writes it: IDLE+DRAIN, DOWN*, ...
  std::string reason;  // Reason= without scontrol's " [user@time]" suffix
  // Drained, draining, down, failing, in maintenance, rebooting, powered
  // down or not responding: not a node serve may drain.
  bool unavailable = false;
  bool drain = false;  // the DRAIN flag is set
};

// Parses one line of `scontrol show node -o NAME`. Reason is free text that
// scontrol writes last: it runs to the end of the line. Throws
// std::invalid_argument when the line has no NodeName= or State=.
SlurmNodeState parse_slurm_node(std::string_view line);

// What the drain brakes need from Slurm (slurm_drain.h); faked in tests.
class SlurmNodeControl {
 public:
  virtual ~SlurmNodeControl() = default;
  // nullopt and *error set when the state cannot be read.
  virtual std::optional<SlurmNodeState> show(const std::string& node,
                                             std::string* error) = 0;
  virtual bool drain(const std::string& node, const std::string& reason,
                     std::string* error) = 0;
  virtual bool resume(const std::string& node, std::string* error) = 0;
};

// Through the scontrol program: $GPUDOCTOR_SCONTROL, else `scontrol` on
// PATH; each call killed after `deadline_s`.
class ScontrolNodeControl : public SlurmNodeControl {
 public:
  explicit ScontrolNodeControl(std::string program, double deadline_s = 10);
  // $GPUDOCTOR_SCONTROL if set and not empty, else "scontrol".
  static std::string default_program();

  std::optional<SlurmNodeState> show(const std::string& node,
                                     std::string* error) override;
  bool drain(const std::string& node, const std::string& reason,
             std::string* error) override;
  bool resume(const std::string& node, std::string* error) override;

 private:
  std::string program_;
  double deadline_s_;
};

}  // namespace gd
