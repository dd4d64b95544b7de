// The temporary files a process has not renamed into place yet, kept where a
// signal handler can reach them. On SIGINT, SIGTERM, SIGHUP or SIGPIPE the
// handler unlinks every registered temporary and re-raises the signal with
// its default action, so an interrupted run leaves neither a partial file at
// a final path (outputs are renamed only when complete, output_file.h) nor a
// stray temporary. SIGKILL runs no handler: only the temporary can remain.
//
// The handler is async-signal-safe: the table is a fixed array of slots, each
// with an atomic state (free -> claimed while its path is copied -> armed),
// and the handler calls only unlink(), sigaction() and raise().
#ifndef HBMSIM_TRACE_IO_TEMP_REGISTRY_H_
#define HBMSIM_TRACE_IO_TEMP_REGISTRY_H_

#include <string>

namespace hbmsim::trace::io {

// Up to this many temporaries at once (outputs of one command); more are
// still written, just not removed by a signal.
inline constexpr int kMaxTempFiles = 32;

// Arms the cleanup of `path`; returns the slot to pass to ForgetTempFile, or
// -1 when the table is full or the path is too long. Installs the signal
// handlers on first use and sets SIGXFSZ to ignored, so exceeding a file size
// limit is a write error (EFBIG) rather than a core dump.
int RememberTempFile(const std::string& path);
// For a host process that owns its signals (the Python module inside
// python3, whose SIGINT raises KeyboardInterrupt): the handlers are never
// installed, so temporaries are removed only by a normal end. Call before
// the first RememberTempFile.
void KeepHostSignalHandlers();
// Disarms a slot (after the rename, or after the temporary was removed).
void ForgetTempFile(int slot);

}  // namespace hbmsim::trace::io

#endif  // HBMSIM_TRACE_IO_TEMP_REGISTRY_H_
