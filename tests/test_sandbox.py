"""The code sandbox: containment on the real bubblewrap sandbox, verdicts, I/O, the warm worker, fallbacks, CLI.

Where bubblewrap cannot make a sandbox here, the tests that need one are skipped with the reason; the
fallback, error-message and CLI-failure tests run anyway.
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time

import pytest

import parlour.sandbox as sandbox
import parlour.sandbox_probes as sandbox_probes
from parlour.cli import main
from parlour.sandbox import Limits, Sandbox, SandboxUnavailable, run_python
from parlour.sandbox_probes import Probe

SHORT = Limits(cpu_seconds=1, wall_seconds=5)


@pytest.fixture(scope="module")
def bwrap_works() -> None:
    """Skip, loudly, where bubblewrap cannot start a sandbox on this machine."""
    try:
        Sandbox().close()
    except SandboxUnavailable as error:
        pytest.skip(f"SANDBOX TESTS SKIPPED: bubblewrap cannot run here: {error}")


@pytest.fixture(scope="module")
def cgroup_budget(bwrap_works: None) -> None:
    """Skip, loudly, where no writable memory cgroup gives a sandbox one budget for all its processes."""
    if sandbox._cgroup_parents() is None:
        pytest.skip("SANDBOX BUDGET TESTS SKIPPED: no writable memory cgroup (v2, or v1) on this machine")


@pytest.fixture(scope="module")
def doctor(bwrap_works: None) -> tuple[int, list[str]]:
    """``parlour doctor sandbox``, the whole probe suite, run once for the module: its exit status and lines."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(["doctor", "sandbox"])
    return status, printed.getvalue().splitlines()


# One probe at least per attack class of issues 20 and 32 (and the containment every sandbox needs).
@pytest.mark.parametrize(
    "prefix",
    [
        "network: no interface but loopback",
        "network: no route out",
        "network: the host's loopback is unreachable",
        "network: the host's abstract UNIX sockets",
        "network: raw, packet and ping sockets",
        "filesystem: writes outside the sandbox fail",
        "filesystem: host files are unreadable",
        "filesystem: the scratch folders hold at most scratch_mb",
        "filesystem: a file cannot outgrow max_file_mb",
        "filesystem: no /sys and no host devices",
        "warm sandbox: files a run leaves",
        "environment: the host's variables are invisible",
        "privileges: the program holds no capabilities",
        "privileges: root cannot be regained",
        "seccomp: the filter is in force",
        "seccomp: user and network namespaces (unshare)",
        "seccomp: new namespaces through clone's flags",
        "seccomp: clone3",
        "seccomp: joining namespaces (setns)",
        "seccomp: io_uring",
        "seccomp: keyrings",
        "seccomp: SysV message queues",
        "seccomp: SysV semaphores",
        "seccomp: SysV shared memory",
        "seccomp: tracing the server and init (ptrace)",
        "seccomp: mounts (mount, umount2)",
        "seccomp: changing the root (pivot_root",
        "seccomp: the new mount API",
        "seccomp: eBPF",
        "seccomp: performance counters",
        "seccomp: kexec",
        "seccomp: kernel modules",
        "seccomp: terminal input injection (ioctl TIOCSTI",
        "seccomp: POSIX message queues",
        "seccomp: sockets of every family but AF_UNIX",
        "privileges: the bounding set holds only the server's capabilities",
        "/proc: kernel symbols",
        "/proc: keys of every user",
        "/proc: memory",
        "/proc: CPU times, load and uptime",
        "/proc: SysV IPC tables",
        "/proc: pressure stall figures",
        "/proc: open files and inodes",
        "/proc: boot id and kernel command line",
        "/proc: CPU model",
        "descriptors: the program holds only stdin, stdout and stderr",
        "PID namespace:",
        "namespaces: user, PID, network, IPC, UTS, mount and cgroup",
        "uid per slot: two concurrent sandboxes run as different users",
        "replay: every slot shows a program the same uid",
        "processes: a neighbour holding its whole process limit",
        "processes: a fork bomb",
        "processes: a setsid() daemon",
        "memory: a memory bomb",
        "memory: 4 processes",
        "memory: pipe buffers count",
        "verdict: MemoryError raised",
        "verdict: fake result frames",
        "verdict: the program cannot kill the server",
        "time: an infinite loop",
        "time: a sleeper",
        "time: SIGXCPU sent to itself ends with verdict error",
        "output: a flood of output",
        "CPU: a neighbour spinning",
        "teardown: closing a sandbox leaves no zombie",
        "signals: the program cannot signal",
        "keyrings: a key planted by one run",
        "SysV IPC and POSIX message queues: a queue, semaphore or segment",
    ],
)
def test_containment_probe_passes(doctor: tuple[int, list[str]], prefix: str) -> None:
    [line] = [line for line in doctor[1] if line[6:].startswith(prefix)]
    assert line.startswith("PASS  "), line


def test_ok_with_stdin_round_trip_and_unicode(bwrap_works: None) -> None:
    text = "héllo wörld ✓ 🙂 日本語\nsecond line\n"
    code = "import sys\ndata = sys.stdin.read()\nprint(data[::-1], end='')\nprint('→ ünïcode', file=sys.stderr)\n"
    result = run_python(code, text)
    assert result.verdict == "ok" and result.exit_code == 0 and result.signal is None
    assert result.stdout == text[::-1]
    assert result.stderr == "→ ünïcode\n"
    assert result.sandboxed and not result.truncated


def test_large_stdin_and_output_under_the_limit_arrive_whole(bwrap_works: None) -> None:
    stdin = "".join(f"{i}\n" for i in range(100_000))
    result = run_python("import sys\nfor line in sys.stdin:\n    print(int(line) * 2)", stdin)
    assert result.verdict == "ok" and not result.truncated
    assert result.stdout == "".join(f"{2 * i}\n" for i in range(100_000))


def test_invalid_utf8_output_is_replaced(bwrap_works: None) -> None:
    result = run_python("import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe end')")
    assert result.stdout == "ok \ufffd\ufffd end"


def test_error_keeps_exit_code_and_a_traceback_of_the_program_only(bwrap_works: None) -> None:
    exited = run_python("import sys\nprint('before')\nsys.exit(3)")
    assert (exited.verdict, exited.exit_code, exited.stdout) == ("error", 3, "before\n")
    assert run_python("exit(4)").exit_code == 4
    raised = run_python("def f():\n    raise ValueError('boom')\nf()")
    assert (raised.verdict, raised.exit_code) == ("error", 1)
    assert raised.stderr.startswith('Traceback (most recent call last):\n  File "main.py", line 3, in <module>')
    assert raised.stderr.endswith("ValueError: boom\n") and "<string>" not in raised.stderr
    syntax = run_python("def (")
    assert syntax.verdict == "error" and syntax.stderr.startswith('  File "main.py", line 1\n')
    assert "SyntaxError" in syntax.stderr


def test_killed_by_a_signal_has_no_exit_code(bwrap_works: None) -> None:
    result = run_python("import os, signal\nos.kill(os.getpid(), signal.SIGABRT)")
    assert (result.verdict, result.exit_code, result.signal) == ("error", None, 6)


def test_cpu_limit_gives_timeout(bwrap_works: None) -> None:
    result = run_python("while True:\n    pass", limits=SHORT)
    assert result.verdict == "timeout" and result.exit_code is None
    # The kernel holds RLIMIT_CPU against CPU time sampled at each tick, the report is the scheduler's exact
    # figure: on a busy machine the ticks run ahead (seen here: SIGXCPU at 0.896 s, other test runs on the 2 CPUs).
    assert 0.8 <= result.cpu_seconds < 3


def test_wall_clock_limit_gives_timeout(bwrap_works: None) -> None:
    started = time.monotonic()
    result = run_python("import time\ntime.sleep(30)", limits=Limits(wall_seconds=1))
    assert result.verdict == "timeout" and result.cpu_seconds < 0.5
    assert 1 <= result.wall_seconds < 2 and time.monotonic() - started < 5


def test_memory_limit_gives_memory_and_allows_what_fits(cgroup_budget: None) -> None:
    limits = Limits(memory_mb=256)
    assert run_python("x = bytearray(400 << 20)", limits=limits).verdict == "memory"
    fits = run_python("x = bytearray(100 << 20)\nx[-1] = 1\nprint(len(x))", limits=limits)
    assert (fits.verdict, fits.stdout) == ("ok", f"{100 << 20}\n")


def test_output_limit_cuts_and_stops_the_program(bwrap_works: None) -> None:
    limits = Limits(max_output_bytes=10_000)
    flood = run_python("import sys\nwhile True:\n    sys.stdout.write('y' * 999)\n    print('e', file=sys.stderr)", limits=limits)
    assert flood.verdict == "output_limit" and flood.truncated
    assert len(flood.stdout.encode()) + len(flood.stderr.encode()) == 10_000
    assert flood.wall_seconds < 2
    exact = run_python("print('z' * 9_999)", limits=limits)
    assert exact.verdict == "ok" and not exact.truncated and exact.stdout == "z" * 9_999 + "\n"


def test_limits_on_files_and_processes_apply(bwrap_works: None) -> None:
    limits = Limits(max_open_files=16, max_file_mb=1)
    files = run_python(
        "import os\nfiles = []\ntry:\n    while True:\n        files.append(open(os.devnull))\nexcept OSError:\n    print(len(files))", limits=limits
    )
    assert files.verdict == "ok" and int(files.stdout) < 16
    big = run_python("open('big', 'wb').write(b'x' * (2 << 20))", limits=limits)
    assert big.verdict == "error" and "File too large" in big.stderr


def test_only_the_scratch_folders_are_writable_and_multiprocessing_works(bwrap_works: None) -> None:
    code = (
        "import os\nfrom concurrent.futures import ProcessPoolExecutor\n"
        "for folder in ('/tmp', '/dev/shm', '/dev', '/', '/etc', '/usr'):\n"
        "    try:\n"
        "        open(os.path.join(folder, 'probe'), 'w').close()\n"
        "        print('writable', folder)\n"
        "    except OSError:\n"
        "        pass\n"
        "with ProcessPoolExecutor(2) as pool:\n"
        "    print(sum(pool.map(abs, range(-5, 5))))\n"
    )
    result = run_python(code)
    assert result.stdout.splitlines() == ["writable /tmp", "writable /dev/shm", "25"], result.stderr


WARM_PROGRAMS = [
    ("print(input().upper())", "abc ✓"),
    ("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(7)", ""),
    ("raise KeyError('k')", ""),
    ("x = bytearray(1 << 40)", ""),
    ("while True:\n    print('w' * 500)", ""),
    ("import os\nprint(sorted(os.listdir('.')), os.getcwd())", ""),
]


def test_warm_sandbox_gives_the_same_results_as_a_fresh_one(bwrap_works: None) -> None:
    limits = Limits(max_output_bytes=4096)
    fields = ("stdout", "stderr", "exit_code", "signal", "verdict", "truncated", "sandboxed")
    with Sandbox(limits) as warm:
        for code, stdin in WARM_PROGRAMS:
            fresh_result = run_python(code, stdin, limits=limits)
            warm_result = warm.run(code, stdin)
            assert [getattr(warm_result, f) for f in fields] == [getattr(fresh_result, f) for f in fields], code


def test_warm_sandbox_forgets_files_and_processes_between_runs(bwrap_works: None) -> None:
    with Sandbox() as warm:
        planted = warm.run(
            "import os, subprocess\nopen('left.txt', 'w').write('x')\nos.mkdir('d')\n"
            "os.chmod('d', 0)\nsubprocess.Popen(['sleep', '60'], start_new_session=True)"
        )
        assert planted.verdict == "ok", planted.stderr
        census = warm.run("import os\nprint(sorted(os.listdir('.')))\nprint(sum(p.isdigit() for p in os.listdir('/proc')))")
        assert census.stdout.splitlines() == ["['main.py']", "3"]


def test_warm_sandbox_is_faster_than_a_fresh_one(bwrap_works: None) -> None:
    fresh, warm_times = [], []
    with Sandbox() as warm:
        warm.run("pass")
        for _ in range(7):
            started = time.perf_counter()
            assert run_python("print(1)").stdout == "1\n"
            fresh.append(time.perf_counter() - started)
            started = time.perf_counter()
            assert warm.run("print(1)").stdout == "1\n"
            warm_times.append(time.perf_counter() - started)
    assert statistics.median(warm_times) < statistics.median(fresh) / 2, (warm_times, fresh)


def test_warm_sandbox_restarts_after_close(bwrap_works: None) -> None:
    warm = Sandbox()
    assert warm.run("print(1)").stdout == "1\n"
    warm.close()
    assert warm.run("print(2)").stdout == "2\n"
    warm.close()


def test_missing_bubblewrap_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(sandbox, "BWRAP", str(tmp_path / "no-such-bwrap"))
    with pytest.raises(SandboxUnavailable) as raised:
        run_python("print(1)")
    message = str(raised.value)
    assert "not found" in message and "apt-get install bubblewrap" in message and "allow_unsafe=True" in message


def test_bubblewrap_that_cannot_start_says_why(tmp_path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(SandboxUnavailable) as raised:
        Sandbox(bwrap=str(fake))
    message = str(raised.value)
    assert "No permissions to create new namespace" in message and "user namespaces" in message
    assert "allow_unsafe=True" in message


def test_allow_unsafe_falls_back_to_a_plain_subprocess_with_the_same_limits(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(sandbox, "BWRAP", str(tmp_path / "no-such-bwrap"))
    with pytest.warns(RuntimeWarning, match="WITHOUT a sandbox"):
        result = run_python("print(input()[::-1])", "abc", allow_unsafe=True)
    assert (result.verdict, result.stdout, result.sandboxed) == ("ok", "cba\n", False)
    with pytest.warns(RuntimeWarning):
        looping = run_python("while True:\n    pass", limits=SHORT, allow_unsafe=True)
    assert looping.verdict == "timeout" and not looping.sandboxed
    with pytest.warns(RuntimeWarning):
        hungry = run_python("x = bytearray(400 << 20)", limits=Limits(memory_mb=256), allow_unsafe=True)
    # Without a cgroup the limit is the process's address space, and a MemoryError is the program's own word.
    assert hungry.verdict == ("memory" if sandbox._cgroup_parents() else "error")


def test_doctor_sandbox_exits_zero_when_every_probe_passes(doctor: tuple[int, list[str]]) -> None:
    status, lines = doctor
    assert status == 0, "\n".join(line for line in lines if not line.startswith("PASS  "))
    passed = sum(line.startswith("PASS  ") for line in lines)
    assert passed >= 40 and lines[-1] == f"{passed} of {passed} probes passed" and len(lines) == passed + 1


def test_doctor_sandbox_exits_one_when_a_probe_fails(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(
        sandbox_probes,
        "run_probes",
        lambda bwrap=None: [
            Probe("network: no interface but loopback", True, "interfaces: lo"),
            Probe("network: no route out", False, "reached: ['1.1.1.1']"),
        ],
    )
    assert main(["doctor", "sandbox"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  network: no route out -- reached: ['1.1.1.1']" in out and "1 of 2 probes passed" in out


def test_doctor_sandbox_exits_one_without_bubblewrap(tmp_path, capsys) -> None:
    assert main(["doctor", "sandbox", "--bwrap", str(tmp_path / "no-such-bwrap")]) == 1
    assert "apt-get install bubblewrap" in capsys.readouterr().out
