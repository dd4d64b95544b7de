"""`hbmsim sweep`: the task list is deterministic, 3 shards merged equal the
unsharded run, a Dask LocalCluster with 2 workers equals it too, and a run
killed or damaged part-way resumes to the same results."""

import json
import os
import signal
import subprocess
import time

import pytest

from conftest import BINARY, EXAMPLES, SHARED_DIR

SNAPSHOTS = ["small_trace_from_empty.pickle", "cs336_ctx128_forward.pickle", "gen2_segments_only_list.pkl"]


@pytest.fixture
def spec(tmp_path):
    recordings = [os.path.join(EXAMPLES, "*.trace")]
    for name in SNAPSHOTS:
        path = os.path.join(SHARED_DIR, "torch_snapshots", name)
        if os.path.exists(path):
            recordings.append(path)
    text = "recordings:\n" + "".join(f"  - {r}\n" for r in recordings)
    text += ("allocators: [torch]\n"
             "settings:\n  expandable_segments: [false, true]\n"
             "limits: [256MiB]\n"
             "size: true\n")
    path = tmp_path / "sweep.yaml"
    path.write_text(text)
    return str(path)


def sweep(*args):
    proc = subprocess.run([BINARY, "sweep", *map(str, args)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def results(folder):
    return {n: open(os.path.join(folder, n)).read() for n in sorted(os.listdir(folder)) if n.startswith("task-")}


def test_task_list_is_deterministic(spec):
    listed = sweep(spec, "--list").splitlines()
    assert listed == sweep(spec, "--list").splitlines()
    n_recordings = 3 + sum(os.path.exists(os.path.join(SHARED_DIR, "torch_snapshots", s)) for s in SNAPSHOTS)
    assert len(listed) == n_recordings * 2 * 2  # x 2 settings x (limit, size)
    assert listed[0] == ('{"task":0,"recording":"' + os.path.join(EXAMPLES, "fits.trace") +
                         '","allocator":"torch","settings":"expandable_segments=false","question":"limit",'
                         '"bytes_limit":"256MiB","device":null}')


def test_three_shards_equal_unsharded(spec, tmp_path):
    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    sweep(spec, "--out", whole, "--jobs", "2")
    for i in range(3):
        out = sweep(spec, "--out", sharded, "--shard", f"{i}/3")
        assert f"(shard {i}/3)" in out and " 0 already finished" in out
    assert results(whole) == results(sharded)
    assert len(results(whole)) == len(sweep(spec, "--list").splitlines())
    lines = [json.loads(text) for text in results(whole).values()]
    need = {(os.path.basename(l["key"]["recording"]), l["key"]["settings"]): l["result"]["min_bytes_limit"]
            for l in lines if l["key"]["question"] == "size" and l["result"] is not None}
    assert need[("fits.trace", "expandable_segments=false")] == 268435456
    assert need[("oom.trace", "expandable_segments=false")] == 301989888
    assert need[("oom.trace", "expandable_segments=true")] == 314572800  # 2 MiB granules cost 12 MiB here
    assert [lines[i]["exit_code"] for i in (0, 2, 8)] == [0, 1, 1]  # fits/false, fits/true, oom/false at 256MiB
    assert lines[8]["result"]["summary"]["failures"] == 1 and lines[8]["error"] is None
    csv_whole = tmp_path / "whole.csv"
    csv_sharded = tmp_path / "sharded.csv"
    sweep("report", whole, "--csv", csv_whole, "--html", tmp_path / "whole.html")
    sweep("report", sharded, "--csv", csv_sharded)
    assert csv_whole.read_text() == csv_sharded.read_text()
    fits_row = [l for l in csv_whole.read_text().splitlines() if l.startswith('torch,"expandable_segments=false",limit')]
    assert len(fits_row) == 1
    assert (tmp_path / "whole.html").read_text().startswith("<!DOCTYPE html>")


def test_report_never_writes_over_a_result(spec, tmp_path):
    out = tmp_path / "out"
    sweep(spec, "--out", out)
    before = results(out)
    first = sorted(before)[0]
    (tmp_path / "link.csv").symlink_to(out / first)
    for flag, path in (("--csv", out / first), ("--html", tmp_path / "link.csv")):
        proc = subprocess.run([BINARY, "sweep", "report", str(out), flag, str(path)], capture_output=True, text=True)
        assert proc.returncode == 2
        assert proc.stderr == (f"hbmsim sweep: {flag} {path} is the input result {out}/{first}; "
                               "refusing to overwrite it\n")
    assert results(out) == before
    sweep("report", out, "--csv", out / "summary.csv")  # beside the results is fine: not one of them
    assert results(out) == before


def test_a_folder_of_another_sweep_is_refused(spec, tmp_path):
    out = tmp_path / "out"
    sweep(spec, "--out", out)
    before = results(out)
    other = tmp_path / "other.yaml"
    other.write_text(f"recordings:\n  - {os.path.join(EXAMPLES, 'fits.trace')}\nallocators: [bfc]\n"
                     "limits: [256MiB]\n")
    for extra in ([], ["--task", "0"]):
        proc = subprocess.run([BINARY, "sweep", str(other), "--out", str(out), *extra], capture_output=True, text=True)
        assert proc.returncode == 2
        key = json.loads(before["task-000000.json"])["key"]
        assert proc.stderr == (f"hbmsim sweep: --out {out}: task-000000.json holds a result of another sweep "
                               f"({json.dumps(key, separators=(',', ':'))}), not task 0 of this spec; give another "
                               "--out folder, or remove its task-*.json files to start over\n")
    assert results(out) == before  # nothing overwritten, nothing added
    import hbmsim.dask
    with pytest.raises(ValueError, match="task-000000.json holds a result of another sweep"):
        hbmsim.dask.sweep(other, None, out)  # refused before the client is asked for anything
    assert results(out) == before


def test_damaged_run_resumes(spec, tmp_path):
    whole, damaged = tmp_path / "whole", tmp_path / "damaged"
    sweep(spec, "--out", whole)
    sweep(spec, "--out", damaged)
    names = sorted(results(damaged))
    os.remove(damaged / names[0])
    os.remove(damaged / names[3])
    (damaged / names[5]).write_text('{"key": {"task": 5}, "exit_')  # a line from a non-atomic writer
    (damaged / f".{names[1]}.hbmsim-Ab12Cd").write_text("partial")  # what SIGKILL can leave
    out = sweep(spec, "--out", damaged)
    assert f"{len(names) - 3} already finished, 3 ran" in out
    assert results(damaged) == results(whole)


def test_killed_run_resumes(spec, tmp_path):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    sweep(spec, "--out", whole)
    proc = subprocess.Popen([BINARY, "sweep", spec, "--out", str(killed)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    while proc.poll() is None and not (killed.exists() and results(killed)):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = len(results(killed))
    out = sweep(spec, "--out", killed)
    assert f" {finished} already finished" in out
    assert results(killed) == results(whole)


def test_dask_local_cluster_equals_cli(spec, tmp_path):
    distributed = pytest.importorskip("distributed")
    import hbmsim.dask

    whole, dasked = tmp_path / "whole", tmp_path / "dask"
    sweep(spec, "--out", whole)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        summary = hbmsim.dask.sweep(spec, client, out=dasked, progress=False)
    assert results(dasked) == results(whole)
    assert len(summary.lines) == len(results(whole))
    sweep("report", whole, "--csv", tmp_path / "whole.csv")
    assert summary.csv == (tmp_path / "whole.csv").read_text()


def test_dask_retries_failed_and_lost_workers(spec, tmp_path):
    """Task 1's first call raises (Dask's retries resubmit it); task 2's first
    call kills its worker process mid-task (the nanny restarts it and the
    scheduler reschedules the task). The results equal the CLI's."""
    distributed = pytest.importorskip("distributed")
    import hbmsim.dask

    whole, dasked = tmp_path / "whole", tmp_path / "dask"
    sweep(spec, "--out", whole)
    marks = str(tmp_path)

    def flaky(spec_path, out, index):
        import os as os_
        import hbmsim.dask as hd
        mark = os_.path.join(marks, f"attempted-{index}")
        if index in (1, 2) and not os_.path.exists(mark):
            open(mark, "w").close()
            if index == 1:
                raise RuntimeError("a transient failure")
            os_._exit(1)  # the worker process dies with the task running
        return hd.run_task(spec_path, out, index)

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        summary = hbmsim.dask.sweep(spec, client, out=dasked, progress=False, runner=flaky)
    assert os.path.exists(os.path.join(marks, "attempted-1")) and os.path.exists(os.path.join(marks, "attempted-2"))
    assert results(dasked) == results(whole)
    assert len(summary.lines) == len(results(whole))
