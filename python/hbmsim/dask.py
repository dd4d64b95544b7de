"""A sweep (`hbmsim sweep SPEC.yaml`) on a Dask cluster.

    from dask.distributed import Client, LocalCluster
    import hbmsim.dask
    if __name__ == "__main__":  # worker processes re-import a script
        with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster) as client:
            summary = hbmsim.dask.sweep("sweep.yaml", client, out="results/")
        print(summary.text)

The task list is the CLI's (`hbmsim sweep SPEC --list`); each Dask task is
one worker call of `hbmsim sweep SPEC --out DIR --task K` through the
bindings, which writes the same task-NNNNNN.json line a CLI shard writes
(atomically; a finished task is skipped, so a rerun or a Dask retry after a
lost worker never redoes finished work). The folder must be one the workers
and the client share (a local folder for a LocalCluster, a shared file
system for a real cluster). The summary is `hbmsim sweep report DIR`.
"""

import json
import os

import hbmsim


class SweepSummary:
    """`hbmsim sweep report DIR`: the text table, and the CSV and HTML."""

    def __init__(self, out, text, csv, html_page, lines):
        self.out, self.text, self.csv, self.html, self.lines = out, text, csv, html_page, lines

    def _repr_html_(self):
        return self.html

    def __str__(self):
        return self.text


def tasks(spec, out=None):
    """The sweep's task list: one dict per task (its key), in task order.

    out: the results folder; the CLI then first checks that it holds no
      other sweep's results (ValueError naming the file if it does).
    """
    folder = ["--out", os.fspath(out)] if out is not None else []
    code, out, err = hbmsim.cli("sweep", os.fspath(spec), *folder, "--list")
    if code != 0:
        raise ValueError(err.strip())
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def run_task(spec, out, index):
    """Runs task `index` of the sweep into `out` (on a worker); returns its line."""
    code, _, err = hbmsim.cli("sweep", os.fspath(spec), "--out", os.fspath(out), "--task", str(index))
    if code != 0:
        raise RuntimeError(err.strip() or f"hbmsim sweep --task {index} exited with {code}")
    with open(os.path.join(out, f"task-{index:06}.json"), encoding="utf-8") as f:
        return json.loads(f.read())


def sweep(spec, client, out, *, retries=2, progress=True, runner=None):
    """Runs every task of SPEC on `client`'s workers, then merges them.

    retries: how often Dask resubmits a task whose call raised. A task whose
      worker process died is rescheduled by the scheduler on its own (up to
      its `distributed.scheduler.allowed-failures`, 3 by default).
    progress: show dask.distributed's progress bar while the tasks run.
    runner: the function a worker call runs, runner(spec, out, index) -> the
      task's line; run_task by default. A wrapper can add logging, a time
      limit or (in the tests) a failure.
    Returns a SweepSummary (also written as out/summary.txt, .csv, .html).
    """
    spec, out = os.path.abspath(os.fspath(spec)), os.path.abspath(os.fspath(out))
    os.makedirs(out, exist_ok=True)
    keys = tasks(spec, out)  # refuses a folder of another sweep before any worker writes to it
    futures = client.map(runner or run_task, [spec] * len(keys), [out] * len(keys), [k["task"] for k in keys],
                         retries=retries, pure=False)
    if progress:
        from dask.distributed import progress as show_progress
        show_progress(futures)
    lines = client.gather(futures)
    return report(out, lines)


def report(out, lines=None):
    """`hbmsim sweep report OUT` with its CSV and HTML (written beside the results)."""
    csv_path, html_path = os.path.join(out, "summary.csv"), os.path.join(out, "summary.html")
    code, text, err = hbmsim.cli("sweep", "report", out, "--csv", csv_path, "--html", html_path)
    if code != 0:
        raise ValueError(err.strip())
    with open(csv_path, encoding="utf-8") as f:
        csv = f.read()
    with open(html_path, encoding="utf-8") as f:
        html_page = f.read()
    with open(os.path.join(out, "summary.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    return SweepSummary(out, text, csv, html_page, lines)
