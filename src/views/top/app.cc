#include "views/top/app.h"

#include <poll.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>

#include "common/long_run_memory.h"
#include "common/phase_timing.h"
#include "model/process_tree.h"
#include "monitor/who_accounts.h"
#include "views/top/keys.h"
#include "views/top/layout.h"
#include "views/top/rows.h"
#include "views/top/terminal.h"

namespace gd::top {
namespace {

double wall_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

class Loop {
 public:
  Loop(monitor::Feed& feed, const TopOptions& o)
      : feed_(feed), o_(o), term_(o.monochrome) {
    st_.readonly = o.readonly;
    st_.readonly_reason = o.readonly_reason;
    st_.replay = o.replay;
  }

  int run() {
    note_phase("top: starting the feed");
    feed_.start();
    bool dirty = true;
    int frames_drawn = 0;
    bool sample_drawn = false;
    for (;;) {
      if (Terminal::quit_requested()) break;
      if (term_.take_resize()) dirty = true;
      auto f = feed_.latest();
      if (f && (!frame_ || f->seq != frame_->seq)) {
        take(std::move(f));
        dirty = true;
      }
      if (dirty && frame_) {
        redraw();
        dirty = false;
        if (!sample_drawn && frame_->sample) {
          sample_drawn = true;
          note_phase("top: first frame with a sample drawn");
        }
        if (frame_->sample && o_.exit_after_frames > 0 &&
            ++frames_drawn >= o_.exit_after_frames)
          break;
      }
      pollfd fds[3] = {{term_.input_fd(), POLLIN, 0},
                       {feed_.wake_fd(), POLLIN, 0},
                       {Terminal::signal_fd(), POLLIN, 0}};
      // Wake for a footer message that expires, else only on events.
      int timeout = -1;
      if (!st_.message.empty() && st_.message_until > 0) {
        double left = st_.message_until - wall_now();
        timeout = left > 0 ? static_cast<int>(left * 1000) + 10 : 0;
      }
      int r = ::poll(fds, 3, timeout);
      if (r == 0) {
        st_.message.clear();
        dirty = true;
        continue;
      }
      if (r < 0) continue;  // EINTR: a signal; the top of the loop looks
      if (fds[1].revents & POLLIN) {
        feed_.drain_wake();
        dirty = true;
      }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        if (fds[0].revents & (POLLHUP | POLLERR)) break;  // terminal gone
        bool resized = false;
        for (const Key& k : term_.read_keys(resized)) {
          if (!on_key(k)) return finish();
          refresh_rows();
        }
        dirty = true;
      }
    }
    return finish();
  }

 private:
  int finish() {
    feed_.stop();
    return 0;
  }

  void take(std::shared_ptr<const monitor::Frame> f) {
    frame_ = std::move(f);
    // Start-up is over at the second sample (the first one's findings and
    // put-off reads are done): the code only it ran is let go of.
    if (frame_->sample && ++samples_taken_ == 2 && o_.drop_code_pages)
      drop_code_pages();
    // The sample's process tree, built once for the rows and every GPU
    // panel's memory split (each built its own: 9 a frame on 8 GPUs).
    if (frame_->sample) {
      if (tree_)
        tree_->rebuild(*frame_->sample);
      else
        tree_.emplace(*frame_->sample);
    } else {
      tree_.reset();
    }
    if (frame_->sample)
      for (const auto& g : frame_->sample->gpus)
        if (!g.stale && !g.lost) last_good_[g.index] = {g, frame_->sample->t};
    // The who overlay follows the machine while it is open.
    if (st_.overlay == Overlay::kWho && frame_->sample) open_who(st_.who_gpu);
  }

  LayoutInput input() {
    LayoutInput in;
    in.frame = frame_.get();
    in.rows = &rows_;
    in.tree = tree_ ? &*tree_ : nullptr;
    in.state = &st_;
    in.last_good = &last_good_;
    in.now = wall_now();
    in.who = who_ ? &*who_ : nullptr;
    in.kill = kill_.get();
    in.unicode = term_.unicode();
    return in;
  }

  // The rows as the state now asks; after every key, so that keys typed
  // ahead (several in one read) each see what the one before did.
  void refresh_rows() {
    static const Sample kEmpty;
    const Sample& s = frame_ && frame_->sample ? *frame_->sample : kEmpty;
    rows_ = build_rows(s, st_, tree_ ? &*tree_ : nullptr);
    if (frame_) {
      LayoutInput in = input();
      page_ = std::max(1, table_rows(in, term_.width(), term_.height()));
    }
    settle_selection(st_, rows_, page_);
  }

  void redraw() {
    refresh_rows();
    screen_ = layout(input(), term_.width(), term_.height());
    term_.draw(screen_);
  }

  void open_who(int gpu) {
    if (!frame_->sample) return;
    try {
      who_ = monitor::who_account(*frame_->header, *frame_->sample, gpu,
                                  o_.live, o_.proc_root, o_.dev_prefix);
    } catch (const std::exception&) {
      who_.reset();
    }
  }

  // false: quit.
  bool on_key(const Key& k) {
    KeyContext ctx;
    ctx.rows = &rows_;
    ctx.screen = &screen_;
    ctx.findings =
        frame_ && frame_->findings ? frame_->findings->findings.size() : 0;
    ctx.page = page_;
    if (frame_)
      for (const auto& g : frame_->header->gpus) ctx.gpus.push_back(g.index);
    if (frame_ && frame_->sample) ctx.users = users_of(*frame_->sample);
    ctx.now = wall_now();
    ctx.kill_running =
        kill_ && kill_->stage() == monitor::KillJob::Stage::kRunning;
    Action a = handle_key(st_, k, ctx);
    using K = Action::Kind;
    switch (a.kind) {
      case K::kNone:
        break;
      case K::kQuit:
        return false;
      case K::kKill:
        if (!o_.kill_backend) {
          st_.overlay = Overlay::kNone;
          st_.message = "kill is not available here";
          st_.message_until = ctx.now + 4;
          break;
        }
        kill_.reset();
        kill_ = std::make_unique<monitor::KillJob>(
            a.pids, o_.kill_backend(), o_.kill, [this] { feed_.wake(); });
        break;
      case K::kConfirmKill:
      case K::kConfirmKillForce:
        if (kill_) kill_->confirm(a.kind == K::kConfirmKillForce);
        break;
      case K::kCloseKill:
        if (kill_ && kill_->stage() == monitor::KillJob::Stage::kDone)
          for (uint32_t pid : kill_->pids()) st_.tagged.erase(pid);
        kill_.reset();
        break;
      case K::kWho:
        open_who(a.gpu);
        break;
      case K::kReplayPause:
        feed_.control(monitor::ReplayCommand::kTogglePause);
        break;
      case K::kReplayFaster:
        feed_.control(monitor::ReplayCommand::kFaster);
        break;
      case K::kReplaySlower:
        feed_.control(monitor::ReplayCommand::kSlower);
        break;
      case K::kReplayBack:
        feed_.control(monitor::ReplayCommand::kSeekBack);
        break;
      case K::kReplayForward:
        feed_.control(monitor::ReplayCommand::kSeekForward);
        break;
    }
    return true;
  }

  monitor::Feed& feed_;
  const TopOptions& o_;
  Terminal term_;
  TopState st_;
  std::shared_ptr<const monitor::Frame> frame_;
  int samples_taken_ = 0;            // frames with a sample taken from the feed
  std::optional<ProcessTree> tree_;  // of frame_->sample
  std::vector<ProcRow> rows_;
  std::map<int, std::pair<GpuSample, double>> last_good_;
  Screen screen_;
  int page_ = 10;
  std::optional<procmgmt::GpuMemoryAccount> who_;
  std::unique_ptr<monitor::KillJob> kill_;
};

}  // namespace

int run_top(monitor::Feed& feed, const TopOptions& options) {
  Loop loop(feed, options);
  return loop.run();
}

}  // namespace gd::top
