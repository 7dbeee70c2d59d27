// The loop of the fleet screen: frames from the source, keys from the
// terminal, a redraw when either changes or the data ages (once a second,
// so "stale 2m" counts on between rounds).
#include <poll.h>

#include <chrono>
#include <optional>
#include <string>

#include "common/long_run_memory.h"
#include "views/top/fleet.h"
#include "views/top/terminal.h"

namespace gd::top {
namespace {

double fleet_wall_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

int run_fleet_top(monitor::FleetSource& source, const FleetTopOptions& o) {
  Terminal term(o.monochrome);
  FleetViewState st;
  std::shared_ptr<const monitor::FleetFrame> frame;
  std::vector<FleetRow> rows;
  int rounds_drawn = 0;
  uint64_t counted = 0;
  std::optional<std::string> opened;  // told to the source
  source.start();
  for (;;) {
    if (Terminal::quit_requested()) break;
    term.take_resize();
    if (auto f = source.latest(); f) frame = std::move(f);
    if (!frame) frame = std::make_shared<const monitor::FleetFrame>();
    const double now = fleet_wall_now();
    const int page = fleet_table_rows(term.height());
    rows = fleet_rows(*frame, st.filter, now);
    settle_fleet_selection(st, rows, page);
    FleetLayoutInput in;
    in.frame = frame.get();
    in.rows = &rows;
    in.state = &st;
    in.now = now;
    in.unicode = term.unicode();
    term.draw(fleet_layout(in, term.width(), term.height()));
    if (frame->t > 0 && frame->seq != counted) {
      counted = frame->seq;
      ++rounds_drawn;
      if (o.exit_after_frames > 0 && rounds_drawn >= o.exit_after_frames) break;
      // Start-up is over at the second round: its code is let go of
      // (drop_code_pages, as the node view does).
      if (rounds_drawn == 2 && o.drop_code_pages) drop_code_pages();
    }
    pollfd fds[3] = {{term.input_fd(), POLLIN, 0},
                     {source.wake_fd(), POLLIN, 0},
                     {Terminal::signal_fd(), POLLIN, 0}};
    const int r = ::poll(fds, 3, 1000);
    if (r <= 0) continue;  // a second passed, or EINTR
    if (fds[1].revents & POLLIN) source.drain_wake();
    if (fds[0].revents & (POLLHUP | POLLERR)) break;  // terminal gone
    if (fds[0].revents & POLLIN) {
      bool resized = false;
      bool quit = false;
      for (const Key& k : term.read_keys(resized)) {
        FleetAction a = fleet_key(st, k, rows, page);
        if (a == FleetAction::kQuit) quit = true;
        if (a == FleetAction::kRefresh) source.refresh();
        rows = fleet_rows(*frame, st.filter, now);
        settle_fleet_selection(st, rows, page);
      }
      if (quit) break;
      // The node view reads the open node's processes on the source's
      // thread: tell it which node, never wait on it here.
      if (st.open != opened) {
        opened = st.open;
        if (opened)
          source.open(*opened);
        else
          source.close();
      }
    }
  }
  source.stop();
  return 0;
}

}  // namespace gd::top
