#include "trace/io/temp_registry.h"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace hbmsim::trace::io {
namespace {

enum SlotState : int { kFree = 0, kClaimed = 1, kArmed = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};

Slot g_slots[kMaxTempFiles];
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

void RemoveTempsAndDie(int sig) {
  for (Slot& slot : g_slots) {
    if (slot.state.load(std::memory_order_acquire) == kArmed) ::unlink(slot.path);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);  // delivered when the handler returns: the process ends as the signal says
}

void InstallHandlers() {
  struct sigaction act {};
  act.sa_handler = RemoveTempsAndDie;
  sigemptyset(&act.sa_mask);
  for (int sig : kSignals) sigaddset(&act.sa_mask, sig);  // one cleanup at a time
  for (int sig : kSignals) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    // A signal the parent set to ignored (nohup, a shell's background job) stays ignored.
    if (old.sa_handler != SIG_IGN) ::sigaction(sig, &act, nullptr);
  }
  ::signal(SIGXFSZ, SIG_IGN);
}

std::once_flag g_installed;

}  // namespace

void KeepHostSignalHandlers() {
  std::call_once(g_installed, [] {});
}

int RememberTempFile(const std::string& path) {
  std::call_once(g_installed, InstallHandlers);
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kMaxTempFiles; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kClaimed)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kArmed, std::memory_order_release);
    return i;
  }
  return -1;
}

void ForgetTempFile(int slot) {
  if (slot >= 0 && slot < kMaxTempFiles) g_slots[slot].state.store(kFree, std::memory_order_release);
}

}  // namespace hbmsim::trace::io
