"""Issue 32's sandbox hardening, each reproduction a test: the same values in every slot, no socket but AF_UNIX, no
POSIX message queues, an empty bounding set but for the server's capabilities, host figures masked in /proc, a
timeout only from the CPU time the host measures, and a doctor whose seccomp probes catch any entry missing from
the deny-list.
"""

from __future__ import annotations

import errno
import json
import os

import pytest

import parlour.sandbox as sandbox
import parlour.sandbox_probes as sandbox_probes
from parlour.sandbox import Limits, Sandbox, run_python
from tests.test_sandbox import bwrap_works  # noqa: F401 - the shared skip-where-bubblewrap-cannot-run fixture

# What a program can learn about who and where it is: a CodeProposerSolver proposer printing any of these must
# print the same in every sandbox its program may be run in (the determinism check's and the storage replay's).
WHO_AND_WHERE = """
import json, os, socket, tempfile
status = dict(line.split(':', 1) for line in open('/proc/self/status').read().splitlines() if ':' in line)
print(json.dumps({
    'uid': os.getuid(), 'gid': os.getgid(), 'euid': os.geteuid(), 'egid': os.getegid(), 'groups': os.getgroups(),
    'status ids': [status['Uid'].split(), status['Gid'].split()],
    'hostname': socket.gethostname(), 'uname': os.uname().nodename, 'cwd': os.getcwd(),
    'tempdir': tempfile.gettempdir(), 'home': os.path.expanduser('~'), 'pid': os.getpid(), 'ppid': os.getppid(),
    'cgroup': open('/proc/self/cgroup').read(), 'tmp owner': [os.stat('/tmp').st_uid, os.stat('/tmp').st_gid],
    'main.py owner': [os.stat('main.py').st_uid, os.stat('main.py').st_gid],
}))
"""


def test_sandboxes_on_different_slots_show_the_same_uid_hostname_paths_and_pids(bwrap_works: None) -> None:
    with Sandbox() as first, Sandbox() as second:
        one, two = first.run(WHO_AND_WHERE), second.run(WHO_AND_WHERE)
        cgroups = first._cgroup, second._cgroup
    assert one.verdict == two.verdict == "ok", (one.stderr, two.stderr)
    assert cgroups[0] is None or cgroups[0].memory != cgroups[1].memory
    assert json.loads(one.stdout) == json.loads(two.stdout)


def test_the_host_still_sees_each_slot_as_a_user_of_its_own(bwrap_works: None) -> None:
    if os.geteuid() != 0:
        pytest.skip("as a user other than root every sandbox runs as that user")
    look = "import os, time\nprint(os.getuid(), flush=True)\ntime.sleep(0.5)"
    with Sandbox() as first, Sandbox() as second:
        inside = {first.run(look).stdout, second.run(look).stdout}
        hosts = {first.uid, second.uid}
    assert len(inside) == 1 and len(hosts) == 2 and not hosts & {0, 65534, sandbox.SANDBOX_UID}


SOCKETS = """
import json, socket
def attempt(family, kind):
    try:
        socket.socket(family, kind).close()
    except OSError as error:
        return error.errno
    return 0
def pair(family):
    try:
        for end in socket.socketpair(family):
            end.close()
    except OSError as error:
        return error.errno
    return 0
print(json.dumps({
    'vsock': attempt(40, socket.SOCK_STREAM), 'netlink': attempt(16, socket.SOCK_RAW),
    'inet': attempt(socket.AF_INET, socket.SOCK_STREAM), 'inet6': attempt(socket.AF_INET6, socket.SOCK_DGRAM),
    'packet': attempt(17, socket.SOCK_DGRAM), 'inet pair': pair(socket.AF_INET),
    'unix': attempt(socket.AF_UNIX, socket.SOCK_STREAM), 'unix pair': pair(socket.AF_UNIX),
}))
"""


def test_every_socket_family_but_af_unix_is_refused(bwrap_works: None) -> None:
    result = run_python(SOCKETS)
    assert result.verdict == "ok", result.stderr
    answers = json.loads(result.stdout)
    assert answers == {
        "vsock": errno.EPERM,
        "netlink": errno.EPERM,
        "inet": errno.EPERM,
        "inet6": errno.EPERM,
        "packet": errno.EPERM,
        "inet pair": errno.EPERM,
        "unix": 0,
        "unix pair": 0,
    }


# A message queue made by one run of a warm sandbox, found by the next.
MQ = """
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.restype = ctypes.c_int
ctypes.set_errno(0)
made = libc.mq_open(b'/parlour-carry', os.O_CREAT | os.O_RDWR, 0o600, None)
print(json.dumps(0 if made >= 0 else ctypes.get_errno()))
"""


def test_posix_message_queues_are_refused(bwrap_works: None) -> None:
    with Sandbox() as warm:
        first, second = warm.run(MQ), warm.run(MQ)
    assert first.verdict == second.verdict == "ok", (first.stderr, second.stderr)
    assert json.loads(first.stdout) == json.loads(second.stdout) == errno.EPERM


# The bits of the capabilities the server keeps, and of the one the issue found left in the bounding set.
CAPABILITIES = {"CAP_DAC_OVERRIDE": 1, "CAP_FOWNER": 3, "CAP_KILL": 5, "CAP_SETGID": 6, "CAP_SETUID": 7, "CAP_SYS_ADMIN": 21}


def test_the_bounding_set_holds_no_capability_the_server_does_not_need(bwrap_works: None) -> None:
    code = "print(open('/proc/self/status').read().split('CapBnd:')[1].split()[0])"
    result = run_python(code)
    assert result.verdict == "ok", result.stderr
    allowed = 0
    if os.geteuid() == 0:
        for name in sandbox.ROOT_CAPABILITIES:
            allowed |= 1 << CAPABILITIES[name]
    bounding = int(result.stdout, 16)
    assert bounding & ~allowed == 0, f"{bounding:#x}"
    assert not bounding & 1 << CAPABILITIES["CAP_SYS_ADMIN"]


# Host figures the issue found in /proc; each must read empty (or, cpuinfo, the sandbox's own CPUs).
HOST_FILES = ["pressure/cpu", "pressure/memory", "pressure/io", "sys/fs/file-nr", "sys/fs/inode-nr", "sys/kernel/random/boot_id", "cmdline"]


def test_host_figures_in_proc_are_masked(bwrap_works: None) -> None:
    code = (
        "import json\nseen = {}\n"
        f"for name in {HOST_FILES + ['cpuinfo']!r}:\n"
        "    try:\n"
        "        seen[name] = open('/proc/' + name).read()\n"
        "    except FileNotFoundError:\n"
        "        seen[name] = None\n"
        "print(json.dumps(seen))\n"
    )
    result = run_python(code)
    assert result.verdict == "ok", result.stderr
    seen = json.loads(result.stdout)
    for name in HOST_FILES:
        assert seen[name] == ("" if os.path.exists(f"/proc/{name}") else None), (name, seen[name])
    cpus = len(os.sched_getaffinity(0))
    assert seen["cpuinfo"] == "".join(f"processor\t: {n}\n\n" for n in range(cpus))
    host_model = [line for line in open("/proc/cpuinfo") if line.startswith("model name")]
    assert not host_model or host_model[0] not in seen["cpuinfo"]


def test_a_program_that_sends_itself_sigxcpu_is_an_error_not_a_timeout(bwrap_works: None) -> None:
    result = run_python("import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)", limits=Limits(cpu_seconds=1, wall_seconds=5))
    assert (result.verdict, result.signal) == ("error", 24)
    spinning = run_python("while True:\n    pass", limits=Limits(cpu_seconds=1, wall_seconds=5))
    assert spinning.verdict == "timeout"


@pytest.fixture()
def mutable_filter(monkeypatch: pytest.MonkeyPatch):
    """Sandboxes built from a changed deny-list: each started on the spot (no spare of the full filter), the
    filter compiled afresh, and the full one compiled again once the test is over."""
    monkeypatch.setattr(sandbox, "START_AHEAD", False)
    sandbox._seccomp_program.cache_clear()
    yield
    sandbox._seccomp_program.cache_clear()


def _seccomp_probes_with(monkeypatch: pytest.MonkeyPatch, **changes: object) -> list:
    """The doctor's seccomp probes run on sandboxes built with the deny-list ``changes``."""
    for name, value in changes.items():
        monkeypatch.setattr(sandbox, name, value)
    sandbox._seccomp_program.cache_clear()
    return sandbox_probes._probe_seccomp(None)


def test_the_doctor_catches_any_one_system_call_missing_from_the_deny_list(
    bwrap_works: None, mutable_filter: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert all(probe.passed for probe in _seccomp_probes_with(monkeypatch)), "the full filter must pass"
    missed = []
    full = dict(sandbox.DENIED_SYSCALLS)
    for name in full:
        weaker = {key: why for key, why in full.items() if key != name}
        if all(probe.passed for probe in _seccomp_probes_with(monkeypatch, DENIED_SYSCALLS=weaker)):
            missed.append(name)
    assert not missed, f"the doctor passes a filter without {missed}"


def test_the_doctor_catches_a_missing_ioctl_clone_flag_or_socket_family_rule(
    bwrap_works: None, mutable_filter: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    weaker: list[tuple[str, object]] = [
        ("DENIED_IOCTLS", tuple(r for r in sandbox.DENIED_IOCTLS if r != request)) for request in sandbox.DENIED_IOCTLS
    ]
    weaker += [("CLONE_NAMESPACES", sandbox.CLONE_NAMESPACES & ~flag) for flag in (1 << bit for bit in range(32)) if sandbox.CLONE_NAMESPACES & flag]
    weaker += [("ALLOWED_SOCKET_FAMILIES", sandbox.ALLOWED_SOCKET_FAMILIES + (family,)) for family in (2, 10, 16, 40)]
    missed = [(name, value) for name, value in weaker if all(probe.passed for probe in _seccomp_probes_with(monkeypatch, **{name: value}))]
    assert not missed, f"the doctor passes these weaker filters: {missed}"


def test_the_doctor_catches_any_one_file_missing_from_the_masked_proc_list(
    bwrap_works: None, mutable_filter: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = tuple(sandbox.MASKED_PROC)
    missed, empty = [], []
    # A file this kernel lacks shows nothing of the host, masked or not; nor does /proc/locks, which the kernel
    # itself limits to the locks of the reader's PID namespace (an empty sandbox holds none), so only the mask's
    # absence could be seen there, not a host's figure.
    for name in [name for name in full if os.path.exists(f"/proc/{name}") and name != "locks"]:
        monkeypatch.setattr(sandbox, "MASKED_PROC", tuple(other for other in full if other != name))
        sandbox._masked_proc_files.cache_clear()
        # Unmasked, /proc/keys shows the keys the sandbox's uid may view, and the kernel makes and collects a uid's
        # keyring lazily: seen empty once beside another suite's sandboxes. A file the probe read as empty showed
        # nothing of the host at that moment, so it is tried again; a file the probe never read stays a miss.
        for _ in range(3):
            probes = sandbox_probes._probe_proc(None)
            if not all(probe.passed for probe in probes):
                break
            if not any(f"{name} empty" in probe.detail.split("; ") for probe in probes):
                missed.append(name)
                break
        else:
            empty.append(name)
    sandbox._masked_proc_files.cache_clear()
    assert not missed, f"the doctor passes a sandbox that shows {missed}"
    # Always empty unmasked would mean the test could not see the mask's absence there at all.
    assert set(empty) <= {"keys", "key-users"}, f"unmasked, these showed the sandbox nothing three times: {empty}"
