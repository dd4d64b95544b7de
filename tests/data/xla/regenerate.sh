#!/usr/bin/env bash
# Rebuilds the binary protobuf fixtures from their textprotos with Debian's
# protoc and hbmsim's own trace/xla/xla_memory.proto:
#   heap-trace.buffer_assignment.pb  a BufferAssignmentProto (what JAX's
#                                    serialized_buffer_assignment_proto holds)
#   heap-trace.hlo_proto.pb          an HloProto holding the same assignment
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
encode() {
  protoc --proto_path="$root/trace/xla" --encode="hbmsim.xla_proto.$1" "$root/trace/xla/xla_memory.proto"
}
encode BufferAssignmentProto <"$here/heap-trace.textproto" >"$here/heap-trace.buffer_assignment.pb"
{
  echo 'hlo_module: "\n\x04main"'  # an HloModuleProto with only its name; hbmsim skips it
  echo 'buffer_assignment {'
  grep -v '^#' "$here/heap-trace.textproto"
  echo '}'
} | encode HloProto >"$here/heap-trace.hlo_proto.pb"
