"""Sandboxes started ahead: the launcher's spare is a sandbox nothing has run in, made for the same limits, and it
leaves nothing behind (not in the next run, not on the host, not in a forked child's hands).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import parlour.sandbox as sandbox
import parlour.sandbox_probes as sandbox_probes
from parlour.sandbox import Limits, RunResult, run_python
from tests.test_sandbox import bwrap_works  # noqa: F401 - the shared skip-where-bubblewrap-cannot-run fixture

# What a program finds before it plants leftovers for the next run: a file in each scratch folder and a daemon in
# its own session. Its process id and the inode of the first file it makes say whether anything ran before it in
# this sandbox: a fresh one numbers both from the start (PID 3: init, the server, the program).
PLANT_AND_LOOK = """
import json, os, subprocess
seen = {"pid": os.getpid(), "tmp": sorted(os.listdir("/tmp")), "shm": os.listdir("/dev/shm"),
        "processes": sum(name.isdigit() for name in os.listdir("/proc"))}
with open("/tmp/left.txt", "w") as planted:
    planted.write("from an earlier run")
seen["inode"] = os.stat("/tmp/left.txt").st_ino
open("/dev/shm/left", "w").close()
subprocess.Popen(["sleep", "60"], start_new_session=True)
print(json.dumps(seen))
"""


def _spare_ready(limits: Limits) -> sandbox._Server:
    """The launcher's spare for ``limits`` once it has been started (a run with them asks for it)."""
    key = sandbox._start_key(sandbox._find_bwrap(sandbox.BWRAP), limits)
    deadline = time.monotonic() + sandbox.START_TIMEOUT
    while time.monotonic() < deadline:
        spare = sandbox._LAUNCHER._spare
        if spare is not None and spare.key == key:
            return spare
        time.sleep(0.01)
    raise AssertionError("no spare was started ahead")


def _is_bwrap(pid: int) -> bool:
    """Whether ``pid`` is a bubblewrap process (a zombie included)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return "(bwrap)" in stat.read()
    except OSError:
        return False


def test_every_run_from_a_spare_starts_fresh_and_sees_nothing_of_earlier_runs(bwrap_works: None, monkeypatch: pytest.MonkeyPatch) -> None:
    handed_out = []
    take = sandbox._LAUNCHER.take

    def spy(bwrap: str, limits: Limits) -> sandbox._Server | None:
        spare = take(bwrap, limits)
        handed_out.append(spare is not None)
        return spare

    monkeypatch.setattr(sandbox._LAUNCHER, "take", spy)
    runs = [run_python(PLANT_AND_LOOK) for _ in range(6)]
    assert all(run.verdict == "ok" for run in runs), [run.stderr for run in runs]
    seen = [json.loads(run.stdout) for run in runs]
    assert seen == [{"pid": 3, "tmp": ["main.py"], "shm": [], "processes": 3, "inode": seen[0]["inode"]}] * 6
    # The first run may have had to start its own; every later one took the spare its predecessor asked for.
    assert sum(handed_out[1:]) == 5, handed_out


def test_a_spare_is_used_only_for_the_limits_it_was_started_with(bwrap_works: None) -> None:
    look = "import os\nscratch = os.statvfs('/tmp')\nprint(open('/proc/meminfo').readline().split()[1], scratch.f_blocks * scratch.f_frsize)"
    small = Limits(memory_mb=300, scratch_mb=8)
    figures = []
    for limits in (Limits(), small, small, Limits()):
        result = run_python(look, limits=limits)
        assert result.verdict == "ok", result.stderr
        figures.append(result.stdout.split())
    default, custom = [str(512 << 10), str(64 << 20)], [str(300 << 10), str(8 << 20)]
    if sandbox._bwrap_version(sandbox._find_bwrap(sandbox.BWRAP)) < (0, 8):
        default[1] = custom[1] = figures[0][1]  # bubblewrap before 0.8 cannot size the tmpfs
    assert figures == [default, custom, custom, default]


def test_a_spare_that_died_gives_way_to_a_sandbox_started_on_the_spot(bwrap_works: None) -> None:
    assert run_python("pass").verdict == "ok"
    spare = _spare_ready(Limits())
    os.killpg(spare.process.pid, signal.SIGKILL)
    result = run_python("print('served')")
    assert (result.verdict, result.stdout) == ("ok", "served\n"), result
    assert spare.process.poll() is not None and not _is_bwrap(spare.process.pid)


def test_a_spare_no_longer_wanted_is_reaped(bwrap_works: None) -> None:
    assert run_python("pass").verdict == "ok"
    spare = _spare_ready(Limits())
    outer = spare.process.pid
    inner = [
        pid
        for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
        if sandbox_probes._bwrap_stat(pid) is not None and sandbox_probes._bwrap_stat(pid)[1] == outer
    ]
    assert inner
    # Other limits: the launcher closes the spare on its thread and starts one for them.
    assert run_python("pass", limits=Limits(memory_mb=300)).verdict == "ok"
    deadline = time.monotonic() + sandbox.START_TIMEOUT
    while time.monotonic() < deadline and any(_is_bwrap(pid) for pid in [outer, *inner]):
        time.sleep(0.01)
    assert not any(_is_bwrap(pid) for pid in [outer, *inner])


def test_a_process_that_exits_leaves_no_spare_behind(bwrap_works: None) -> None:
    program = (
        "import time, parlour.sandbox as s\n"
        "assert s.run_python('pass').verdict == 'ok'\n"
        "deadline = time.monotonic() + 10\n"
        "while s._LAUNCHER._spare is None and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"
        "print(s._LAUNCHER._spare.process.pid)\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    finished = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=root, timeout=60)
    assert finished.returncode == 0, finished.stderr
    assert not _is_bwrap(int(finished.stdout))


def test_a_forked_child_starts_its_own_sandboxes_and_leaves_the_parents_spare_alone(bwrap_works: None) -> None:
    assert run_python("pass").verdict == "ok"
    spare = _spare_ready(Limits())
    child = os.fork()
    if child == 0:
        status = 1
        try:
            mine = sandbox._LAUNCHER._spare is None and run_python("print(7)").stdout == "7\n"
            status = 0 if mine else 2
        finally:
            # Straight out: no atexit handler or finalizer of the parent's may run here.
            os._exit(status)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert spare.process.poll() is None
    taken = sandbox._LAUNCHER.take(sandbox._find_bwrap(sandbox.BWRAP), Limits())
    try:
        assert taken is spare
        taken.release()
        assert taken.greeted()
    finally:
        taken.close()


def test_sandboxes_started_at_once_from_several_threads_each_get_their_own(bwrap_works: None) -> None:
    results: list[RunResult] = []

    def judge() -> None:
        results.extend(run_python(PLANT_AND_LOOK) for _ in range(3))

    threads = [threading.Thread(target=judge) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 12 and all(result.verdict == "ok" for result in results), [r.stderr for r in results]
    seen = [json.loads(result.stdout) for result in results]
    assert {(look["pid"], look["processes"], look["inode"]) for look in seen} == {(3, 3, seen[0]["inode"])}
    assert all(look["tmp"] == ["main.py"] and look["shm"] == [] for look in seen)
