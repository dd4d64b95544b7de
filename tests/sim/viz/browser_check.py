#!/usr/bin/python3
"""Opens hbmsim's HTML reports in a real headless Chromium (Debian's chromium
and chromedriver, driven by selenium) and checks what a person sees.

For every example in configs/examples and three shared recordings, the report
of `hbmsim replay --html` must open with
  - no console message of level SEVERE (errors, uncaught exceptions),
  - no network request: every resource the page loads is the page itself,
  - the verdict (#verdict) visible in the first screen of a 1024x768 window,
  - no sideways scrolling at 1024 px, and the title not cut.

Usage: browser_check.py HBMSIM_BINARY SOURCE_DIR SHARED_DIR
Exit 0: all pages pass; 1: a page fails (each failure printed); 77: skipped,
with the reason, when chromium, chromedriver or selenium is missing.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
WIDTH, HEIGHT = 1024, 768

# (name, recording under SOURCE_DIR or SHARED_DIR, extra replay flags)
EXAMPLE_FLAGS = ["--allocator", "bfc", "--bytes-limit", "256MiB"]
SHARED = [
    ("h100x4 device 1 (expandable, recorded oom)", "torch_snapshots/h100x4_expandable_segments_oom.pickle",
     ["--device", "1", "--bytes-limit", "auto", "--no-advice"]),
    ("cs336 ctx128 forward (warm start)", "torch_snapshots/cs336_ctx128_forward.pickle",
     ["--bytes-limit", "16GiB", "--no-advice"]),
    ("TF T4 keras profile", "profiler/tf_t4_keras_fit.xplane.pb", ["--no-advice"]),
]


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def driver_or_skip():
    chromium = shutil.which("chromium")
    chromedriver = shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        skip("Debian's chromium and chromedriver are not installed "
             "(bash scripts/install-deps.sh --tests installs them)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip("python3-selenium is not installed (bash scripts/install-deps.sh --tests installs it)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--no-first-run",
                 f"--window-size={WIDTH},{HEIGHT}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(chromedriver), options=options)


def write_reports(binary, source, shared, out):
    """Each page's (name, path); a recording that is absent is a failure, said."""
    pages, missing = [], []
    examples = os.path.join(source, "configs", "examples")
    for name in sorted(os.listdir(examples)):
        if name.endswith(".trace"):
            pages.append((f"example {name}", os.path.join(examples, name), EXAMPLE_FLAGS))
    for name, rel, flags in SHARED:
        path = os.path.join(shared, rel)
        if not os.path.exists(path):
            missing.append(f"{name}: {path} is absent")
            continue
        pages.append((name, path, flags))
    written = []
    for i, (name, recording, flags) in enumerate(pages):
        html = os.path.join(out, f"page{i}.html")
        run = subprocess.run([binary, "replay", recording, "--html", html] + flags,
                             capture_output=True, text=True, check=False)
        if run.returncode not in (0, 1):
            missing.append(f"{name}: hbmsim replay exited {run.returncode}: {run.stderr.strip()}")
            continue
        written.append((name, html))
    return written, missing


# What the page measures about itself, once loaded.
MEASURE = """
const v = document.getElementById('verdict');
const r = v ? v.getBoundingClientRect() : null;
const h1 = document.querySelector('h1');
return {
  verdict: v ? v.innerText : '',
  verdictTop: r ? r.top : -1, verdictBottom: r ? r.bottom : -1,
  innerHeight: window.innerHeight,
  scrollWidth: document.documentElement.scrollWidth,
  clientWidth: document.documentElement.clientWidth,
  titleCut: h1 ? h1.scrollWidth > h1.clientWidth : true,
};
"""


def requests_made(driver, page_url):
    """URLs the page asked the network for (not itself, not inline data)."""
    import json
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") != "Network.requestWillBeSent":
            continue
        url = message["params"]["request"]["url"]
        if url != page_url and not url.startswith("data:"):
            urls.append(url)
    return urls


def check_page(driver, name, path):
    url = "file://" + path
    driver.get("about:blank")
    driver.get_log("browser")
    driver.get_log("performance")
    driver.get(url)
    m = driver.execute_script(MEASURE)
    problems = []
    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE":
            problems.append(f"console error: {entry.get('message')}")
    for request in requests_made(driver, url):
        problems.append(f"network request: {request}")
    if not m["verdict"].strip():
        problems.append("no verdict (#verdict) on the page")
    elif m["verdictTop"] < 0 or m["verdictBottom"] > m["innerHeight"]:
        problems.append(f"the verdict is not in the first screen: it spans y={m['verdictTop']:.0f}.."
                        f"{m['verdictBottom']:.0f} of a {m['innerHeight']} px window")
    if m["scrollWidth"] > m["clientWidth"]:
        problems.append(f"scrolls sideways at {WIDTH} px: {m['scrollWidth']} px wide in {m['clientWidth']}")
    if m["titleCut"]:
        problems.append("the title (h1) is cut")
    return problems


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    binary, source, shared = sys.argv[1:]
    # Chromium leaves its singleton folders (org.chromium.Chromium.*) in the
    # temporary directory it is given: give it one of its own, removed after.
    with tempfile.TemporaryDirectory(prefix="hbmsim-chromium-") as browser_tmp:
        os.environ["TMPDIR"] = browser_tmp
        tempfile.tempdir = None  # this process's own temporaries go there too, and go with it
        return check_reports(binary, source, shared)


def check_reports(binary, source, shared):
    started = time.monotonic()
    driver = driver_or_skip()
    failed = 0
    try:
        with tempfile.TemporaryDirectory(prefix="hbmsim-browser-") as out:
            pages, missing = write_reports(binary, source, shared, out)
            for line in missing:
                print(f"FAIL {line}")
                failed += 1
            for name, path in pages:
                problems = check_page(driver, name, path)
                print(f"{'FAIL' if problems else 'ok  '} {name}")
                for p in problems:
                    print(f"     {p}")
                failed += bool(problems)
            print(f"{len(pages)} pages opened in headless Chromium in {time.monotonic() - started:.1f} s; "
                  f"{failed} failed")
    finally:
        driver.quit()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
