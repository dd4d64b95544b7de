"""Issue 48 from Python: an endless pipe ends with an error at the documented
cap, and a device number beyond what a recording can hold is refused, with
the CLI's own one-line messages."""

import os

import pytest

import hbmsim
from conftest import SOURCE_DIR, example

STATE_ONLY = os.path.join(SOURCE_DIR, "tests", "fuzz", "corpus", "torch_snapshot",
                          "state_only_expandable_maxsplit128.pickle")


def test_dev_zero_ends_at_the_pipe_cap(monkeypatch, tmp_path):
    # The module reads the variable in-process, as the CLI does; TMPDIR keeps the spool in pytest's folder.
    monkeypatch.setenv("HBMSIM_PIPE_LIMIT", "1MiB")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with pytest.raises(OSError) as e:
        hbmsim.replay("/dev/zero", allocator="bfc")
    assert str(e.value) == (f"hbmsim replay: cannot read /dev/zero: more than 1048576 B (1.00MiB) piped in, "
                            f"the most spooled to {tmp_path}; give it as a file, or raise the cap with "
                            "HBMSIM_PIPE_LIMIT=SIZE")
    assert os.listdir(tmp_path) == []  # the spool was unlinked at once


def test_a_device_number_too_large_or_absent_is_refused():
    with pytest.raises(ValueError) as e:
        hbmsim.replay(STATE_ONLY, device=2**70)
    assert str(e.value) == ("hbmsim replay: --device 1180591620717411303424: '1180591620717411303424' does not "
                            "fit in 64 bits")
    with pytest.raises(ValueError) as e:
        hbmsim.replay(STATE_ONLY, device=99)
    assert str(e.value) == (f"hbmsim replay: --device 99: {STATE_ONLY} holds nothing on device 99 (devices "
                            "holding segments: 0, 1)")
    with pytest.raises(ValueError) as e:
        hbmsim.replay(example("fragmentation.trace"), allocator="bfc", device=-1)
    assert str(e.value) == "hbmsim replay: --device -1: negative number '-1'"
