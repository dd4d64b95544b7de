"""`import hbmsim` against the hbmsim binary: the same JSON report, exit code
and error line for the same command, on the bundled examples and on every
shared PyTorch snapshot (skipped when ../shared is absent)."""

import os
import pickle
import subprocess
import sys
import tempfile
import threading

import pytest

import hbmsim
from conftest import BINARY, SHARED_DIR, example, shared_snapshots

FRAGMENTATION = example("fragmentation.trace")
MiB = 1 << 20


def test_fragmentation_verdict_and_placements():
    r = hbmsim.replay(FRAGMENTATION, allocator="bfc", bytes_limit="256MiB")
    assert r.exit_code == 1
    assert r.verdict.startswith("Verdict: 1 of 6 allocations failed on device 0 with bfc under the limit "
                                "268435456 B (256.00MiB) (from --bytes-limit)")
    assert "It is fragmentation: 134217728 B (128.00MiB) was free" in r.verdict
    assert r["verdict"] == r.verdict
    assert [f["kind"] for f in r.failures] == ["fragmentation"]
    assert r.failures[0]["tag"] == "grad_buffer"
    p = r.placements
    assert list(p["event"]) == [0, 1, 2, 3, 7, 10]
    assert list(p["offset"]) == [0, 64 * MiB, 128 * MiB, 192 * MiB, -1, 64 * MiB]
    assert list(p["status"]) == ["ok", "ok", "ok", "ok", "fragmentation", "ok"]
    assert list(p["size"]) == [64 * MiB] * 4 + [0, 96 * MiB]
    frame = r.placements_frame()
    assert list(frame.columns) == ["event", "id", "requested", "status", "offset", "size"]
    assert frame["requested"].sum() == 4 * 64 * MiB + 2 * 96 * MiB
    assert r._repr_html_().startswith('<iframe style="width:100%;height:720px;border:0" srcdoc="')
    assert "&lt;svg" in r._repr_html_()


def test_reserved_explained_adds_up_and_names_bfc_causes():
    r = hbmsim.replay(FRAGMENTATION, allocator="bfc", bytes_limit="256MiB")
    x = r.reserved_explained
    for moment in ("peak", "first_failure", "end"):
        assert sum(p["bytes"] for p in x[moment]["parts"]) == x[moment]["reserved"] == 256 * MiB
    # Event 7 asks for 96 MiB: weights and act_l2 hold 128 MiB, the two 64 MiB
    # holes are a chunk in bin 18 (log2(64 MiB / 256)) and region 0's free top.
    failure = x["first_failure"]
    assert failure["event"] == 7
    assert [(p["cause"], p.get("key"), p["bytes"]) for p in failure["parts"]] == [
        ("requested", "act_l2", 64 * MiB), ("requested", "weights", 64 * MiB), ("rounding", None, 0),
        ("free_chunk", "bin 18", 64 * MiB), ("region_tail", "region 0", 64 * MiB)]
    assert x["peak"]["event"] == 3 and x["peak"]["allocated"] == 256 * MiB
    # At the end the whole region is free, by who freed it: grad_buffer's 96 MiB
    # (event 11) over act_l1's and half of act_l2's bytes, then act_l3, weights
    # and act_l2's other half.
    assert x["end"]["parts"] == [{"cause": "region_tail", "key": "region 0", "bytes": 256 * MiB, "blocks": 1,
                                  "freed_by": [
                                      {"label": "grad_buffer", "bytes": 96 * MiB, "blocks": 1, "frees": 1},
                                      {"label": "act_l3", "bytes": 64 * MiB, "blocks": 1, "frees": 1},
                                      {"label": "weights", "bytes": 64 * MiB, "blocks": 1, "frees": 1},
                                      {"label": "act_l2", "bytes": 32 * MiB, "blocks": 1, "frees": 1}]}]
    assert x["end"]["largest_cached"][0]["freed_by"] == {
        "event": 12, "id": 1, "label": "weights", "frees": 4, "bytes": 256 * MiB}


@pytest.mark.parametrize("name,allocator,limit", [
    ("fragmentation.trace", "bfc", "256MiB"),
    ("oom.trace", "bfc", None),
    ("fits.trace", "bfc", None),
    ("fragmentation.trace", "torch", "256MiB"),
    ("fragmentation.trace", "tpu", "256MiB"),
])
def test_examples_equal_cli(run_cli, name, allocator, limit):
    path = example(name)
    limit_args = [] if limit is None else ["--bytes-limit", limit]
    cli = run_cli("replay", path, "--allocator", allocator, *limit_args)
    r = hbmsim.replay(path, allocator=allocator, bytes_limit=limit)
    assert r.exit_code == cli.code
    assert r.json == cli.report
    assert r.text == cli.out


def test_size_compare_advise_equal_cli(run_cli):
    cli = run_cli("size", FRAGMENTATION, "--allocator", "bfc")
    r = hbmsim.size(FRAGMENTATION, allocator="bfc")
    assert (r.exit_code, r.json, r.text) == (cli.code, cli.report, cli.out)
    assert r.min_bytes_limit == 301989888  # 4 x 64 MiB + 96 MiB, minus the 64 MiB freed before it
    cli = run_cli("compare", FRAGMENTATION, "--allocators", "bfc,tpu,best_fit,offline", "--bytes-limit", "256MiB")
    r = hbmsim.compare(FRAGMENTATION, allocators=["bfc", "tpu", "best_fit", "offline"], bytes_limit="256MiB")
    assert (r.exit_code, r.json, r.text) == (cli.code, cli.report, cli.out)
    cli = run_cli("advise", FRAGMENTATION, "--allocator", "torch", "--bytes-limit", "256MiB")
    r = hbmsim.advise(FRAGMENTATION, allocator="torch", bytes_limit="256MiB")
    assert (r.exit_code, r.json, r.text) == (cli.code, cli.report, cli.out)


def test_settings_become_sets(run_cli):
    cli = run_cli("replay", FRAGMENTATION, "--allocator", "bfc", "--bytes-limit", "256MiB",
                  "--set", "allow_growth=true", "--set", "garbage_collection=false")
    r = hbmsim.replay(FRAGMENTATION, allocator="bfc", bytes_limit=256 * MiB,
                      settings={"allow_growth": True, "garbage_collection": False})
    assert r.json["allocator"] == cli.report["allocator"]
    assert r.json["stats"] == cli.report["stats"]


def test_errors_carry_the_cli_line(run_cli):
    with pytest.raises(OSError) as e:
        hbmsim.replay("/nonexistent/t.trace", allocator="bfc")
    assert str(e.value) == "hbmsim replay: cannot read /nonexistent/t.trace: No such file or directory"
    cli = run_cli("replay", FRAGMENTATION, "--allocator", "nope")
    with pytest.raises(ValueError) as e:
        hbmsim.replay(FRAGMENTATION, allocator="nope")
    assert str(e.value) == cli.err.strip()
    assert str(e.value).startswith("hbmsim replay: --allocator nope: unknown allocator (built-in: ")
    with pytest.raises(ValueError) as e:
        hbmsim.replay(b"not a trace at all\n", allocator="bfc")
    assert "<recording bytes>" in str(e.value) and "/tmp/" not in str(e.value)


def test_bytes_recording_equals_path():
    with open(FRAGMENTATION, "rb") as f:
        data = f.read()
    by_path = hbmsim.replay(FRAGMENTATION, allocator="bfc", bytes_limit="256MiB")
    by_bytes = hbmsim.replay(data, allocator="bfc", bytes_limit="256MiB")
    assert by_bytes.verdict == by_path.verdict
    assert by_bytes.json["stats"] == by_path.json["stats"]
    assert by_bytes.json["failures"] == by_path.json["failures"]


def test_threads_give_the_serial_results():
    jobs = [(example(n), a) for n in ("fragmentation.trace", "oom.trace", "fits.trace") for a in ("bfc", "torch")]
    serial = [hbmsim.replay(p, allocator=a, advice=False, html=False).json for p, a in jobs]
    parallel = [None] * len(jobs)

    def work(i):
        p, a = jobs[i]
        parallel[i] = hbmsim.replay(p, allocator=a, advice=False, html=False).json

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert parallel == serial


def test_python_m_hbmsim_is_the_cli():
    args = ["replay", FRAGMENTATION, "--allocator", "bfc", "--bytes-limit", "256MiB", "--quiet"]
    cli = subprocess.run([BINARY, *args], capture_output=True, text=True)
    py = subprocess.run([sys.executable, "-m", "hbmsim", *args], capture_output=True, text=True)
    assert (py.returncode, py.stdout, py.stderr) == (cli.returncode, cli.stdout, cli.stderr) == (1, cli.stdout, "")


def _no_pickling(*args, **kwargs):
    raise AssertionError("the snapshot object was pickled")


def _temp_dir_that_stays_empty(monkeypatch):
    """TemporaryDirectory whose cleanup asserts no input file was written
    there (the run's outputs, report.json etc., are allowed)."""
    init = tempfile.TemporaryDirectory.__init__

    def wrapped(self, *args, **kwargs):
        init(self, *args, **kwargs)
        cleanup = self.cleanup

        def checked():
            inputs = [n for n in os.listdir(self.name) if n.endswith(".input")]
            assert not inputs, inputs
            cleanup()
        self.cleanup = checked
    return wrapped


def test_snapshot_object_of_another_type_names_its_key_path():
    snapshot = {"segments": [], "device_traces": [[{"action": "alloc", "addr": 0, "size": 8,
                                                     "frames": [{"name": "f", "filename": {1, 2}}]}]]}
    with pytest.raises(ValueError) as e:
        hbmsim.replay(snapshot, allocator="torch", advice=False, html=False)
    assert str(e.value) == ("<recording snapshot>: ['device_traces'][0][0]['frames'][0]['filename']: "
                            "unsupported type set (a snapshot holds dict, list, tuple, str, bytes, int, "
                            "float, bool and None)")


@pytest.mark.parametrize("path", shared_snapshots(), ids=os.path.basename)
def test_shared_snapshot_equals_cli(run_cli, path, monkeypatch):
    cli = run_cli("replay", path, "--allocator", "torch", "--no-advice")
    if cli.code == 2:
        with pytest.raises((ValueError, OSError)) as e:
            hbmsim.replay(path, allocator="torch", advice=False, html=False)
        assert str(e.value) == cli.err.strip()
        return
    r = hbmsim.replay(path, allocator="torch", advice=False, html=False)
    assert (r.exit_code, r.json, r.text) == (cli.code, cli.report, cli.out)
    # The snapshot object itself (what torch.cuda.memory._snapshot() returns),
    # loaded with pickle and no torch: the same report but for the input's name.
    with open(path, "rb") as f:
        snapshot = pickle.load(f)
    # Read directly (issue 19): converted in memory and opened by name, never
    # pickled again nor written to a file.
    opens = hbmsim._native.memory_snapshot_opens()
    monkeypatch.setattr(pickle, "dumps", _no_pickling)
    monkeypatch.setattr(tempfile.TemporaryDirectory, "__init__", _temp_dir_that_stays_empty(monkeypatch))
    d = hbmsim.replay(snapshot, allocator="torch", advice=False, html=False)
    monkeypatch.undo()
    assert hbmsim._native.memory_snapshot_opens() > opens
    assert d.exit_code == r.exit_code
    names = [k for k in ("trace", "snapshot") if k in r.json]  # a replay's, a state-only analysis's
    assert len(names) == 1 and r.json[names[0]] == path and d.json[names[0]] == "<recording snapshot>"
    assert {k: v for k, v in d.json.items() if k != names[0]} == {k: v for k, v in r.json.items() if k != names[0]}
    assert d.text.replace("<recording snapshot>", path) == r.text


def test_a_snapshot_replays_under_torch_without_allocator():
    # The allocator that wrote the recording, as the CLI picks it: the same report as allocator="torch".
    path = os.path.join(SHARED_DIR, "torch_snapshots", "h100x4_expandable_segments_oom.pickle")
    if not os.path.exists(path):
        pytest.skip("../shared is absent")
    named = hbmsim.replay(path, allocator="torch", advice=False, html=False)
    chosen = hbmsim.replay(path, advice=False, html=False)
    assert (chosen.exit_code, chosen.json, chosen.text) == (named.exit_code, named.json, named.text)
    assert chosen.exit_code == 1 and chosen.json["allocator"]["name"] == "torch"
    with open(path, "rb") as f:
        from_object = hbmsim.replay(pickle.load(f), advice=False, html=False)
    assert from_object.json["allocator"] == named.json["allocator"]
    assert hbmsim.size(path).json == hbmsim.size(path, allocator="torch").json
    with pytest.raises(ValueError) as e:
        hbmsim.replay(FRAGMENTATION)
    assert str(e.value).startswith("hbmsim replay: --allocator: required: ")


def test_diagnose_text_and_path_equal_cli(run_cli):
    path = os.path.join(SHARED_DIR, "bfc_dumps", "01.txt")
    if not os.path.exists(path):
        pytest.skip("../shared/bfc_dumps is absent")
    cli = run_cli("diagnose", path)
    r = hbmsim.diagnose(path)
    assert (r.exit_code, r.json, r.text) == (cli.code, cli.report, cli.out)
    with open(path, encoding="utf-8", errors="replace") as f:
        from_text = hbmsim.diagnose(f.read())
    assert from_text.exit_code == cli.code
    assert {k: v for k, v in from_text.json.items() if k != "source"} == \
        {k: v for k, v in cli.report.items() if k != "source"}


def test_version_is_the_clis():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "VERSION"), encoding="utf-8") as f:
        version = f.read().strip()
    assert hbmsim.__version__ == version
    module = subprocess.run([sys.executable, "-m", "hbmsim", "--version"], capture_output=True, text=True,
                            env=dict(os.environ), cwd="/")
    assert (module.returncode, module.stdout, module.stderr) == (0, f"hbmsim {version}\n", "")
    binary = subprocess.run([BINARY, "--version"], capture_output=True, text=True)
    assert binary.stdout == module.stdout


def test_scale_equals_cli_and_reads_snapshot_objects(run_cli):
    folder = os.path.join(SHARED_DIR, "families", "attention_fwd_fp32")
    if not os.path.isdir(folder):
        pytest.skip("../shared/families is absent")
    at = {v: os.path.join(folder, f"seq{v}.pickle") for v in (256, 1024, 4096)}
    r = hbmsim.scale(at, to=8192, fit_limit="16GiB", step=256)
    cli = run_cli("scale", *[x for v, p in at.items() for x in ("--at", v, p)],
                  "--to", 8192, "--fit-limit", "16GiB", "--step", 256)
    assert r.exit_code == cli.code == 0
    assert r.json == cli.report
    assert r["allocations"] == 800 and r["verdict"] == "fits"
    assert r["peak_allocated_bytes"] == 6472728576
    assert r["largest_fitting"]["to"] == 13312
    with open(at[4096], "rb") as f:
        from_object = hbmsim.scale({256: at[256], 1024: at[1024], 4096: pickle.load(f)}, to=8192)
    assert from_object["peak_reserved_bytes"] == r["peak_reserved_bytes"]
    assert from_object["recordings"][2]["path"] == "<at 4096 snapshot>"
    with pytest.raises(ValueError) as e:
        hbmsim.scale({256: at[256]}, to=512)
    assert str(e.value) == "hbmsim scale: --at: give at least two recordings of the job at different sizes"


def test_presets_are_the_clis_and_name_a_limit():
    presets = hbmsim.presets()
    assert presets["a100-40gb"]["bytes"] == 42298834944
    assert presets["a100-40gb"]["figure"] == "cuda-total"
    assert presets["tpu-v5e"]["bytes"] == 16 << 30
    r = hbmsim.replay(example("fits.trace"), allocator="bfc", bytes_limit="l4", advice=False, html=False)
    assert r["allocator"]["bytes_limit"] == 23034 * MiB
    assert r["allocator"]["bytes_limit_source"] == "--bytes-limit l4 (NVIDIA L4, nvml-total)"


def test_advise_from_a_fresh_start_equals_size_place():
    path = os.path.join(SHARED_DIR, "families", "xl_fwd_fp32", "ctx128.pickle")
    if not os.path.exists(path):
        pytest.fail(f"shared recording absent: {path}")
    advice = hbmsim.advise(path, bytes_limit="40GiB", start_state="place", jobs=2)
    place = hbmsim.size(path, start_state="place", jobs=2)
    assert advice["today"]["min_bytes_limit"] == place["min_bytes_limit"] == 14097055744
    assert advice["fresh_start"] is None
