"""The containment checks of :mod:`parlour.sandbox`, which ``parlour doctor sandbox`` runs on this machine.

Each probe attacks real sandboxes (fresh ones, warm ones where it says so) and reports what it saw:
:func:`run_probes` runs them all, one or more per attack class. The attacks are written here, apart from the
runtime's own lists: :data:`SECCOMP_FAMILIES` against the seccomp filter (whatever the deny-list holds, a call
missing from the filter fails a probe) and :data:`PROC_FAMILIES` against the masked /proc files.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from parlour.sandbox import (
    OVERHEAD_PROCESSES,
    ROOT_CAPABILITIES,
    Limits,
    RunResult,
    Sandbox,
    SandboxUnavailable,
    Verdict,
    _proc_figures,
    _seccomp_program,
)


@dataclass(frozen=True)
class Probe:
    """One containment check: its name, whether the sandbox held, and what was seen."""

    name: str
    passed: bool
    detail: str


# Each probe program prints one JSON object: what it managed to do.
_ATTEMPTS = """
import json, os

def attempt(action):
    try:
        result = action()
    except OSError:
        return False
    return result if isinstance(result, list) else True
"""


def _observe(result: RunResult) -> dict:
    """The JSON a probe program printed, or {} (the probe then fails with the program's stderr as detail)."""
    try:
        return json.loads(result.stdout)
    except ValueError:
        return {}


def _failure(result: RunResult) -> str:
    """The detail of a probe whose program did not get to say what it saw."""
    return f"the probe program failed: {result.verdict}, {result.stderr.strip()[-300:]!r}"


def _probe_run(code: str, bwrap: str | None, limits: Limits | None = None, follow_up: str | None = None):
    """Run ``code`` in a fresh sandbox (and ``follow_up`` after it, in the same one)."""
    with Sandbox(limits, bwrap=bwrap) as sandbox:
        first = sandbox.run(code)
        return (first, sandbox.run(follow_up)) if follow_up is not None else first


def _processes_in(sandbox: Sandbox) -> int:
    """How many processes the sandbox holds, counted by the host in its cgroup (-1 without one)."""
    if sandbox._cgroup is None:
        return -1
    return len((sandbox._cgroup.memory / "cgroup.procs").read_text().split())


def _beside(sandbox: Sandbox, code: str, limits: Limits, processes: int, action):
    """Run ``code`` in ``sandbox`` on a thread; once it holds ``processes`` processes besides the sandbox's own
    (or after 5 s), call ``action``, then have the server kill the program. Returns ``action``'s value and the
    program's result."""
    outcome: list[RunResult] = []
    thread = threading.Thread(target=lambda: outcome.append(sandbox.run(code, limits=limits)))
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and _processes_in(sandbox) < processes + OVERHEAD_PROCESSES:
            time.sleep(0.01)
        return action(), outcome
    finally:
        while thread.is_alive():
            # The server ignores a kill that arrives between runs, so repeating it until the run ends is safe.
            # Read each time: a run that finds its server dead starts another, on a new socket.
            sock = sandbox._sock
            assert sock is not None  # set by the Sandbox's constructor, never reset to None
            try:
                sock.send(b"kill")
            except OSError:
                pass
            thread.join(0.1)


def _probe_interfaces(bwrap: str | None) -> list[Probe]:
    """The network namespace has only loopback."""
    name = "network: no interface but loopback"
    # From /proc: if_nameindex() asks over a netlink socket, which the filter refuses.
    code = (
        "import json\nlines = open('/proc/net/dev').read().splitlines()[2:]\nprint(json.dumps(sorted(line.split(':')[0].strip() for line in lines)))"
    )
    result = _probe_run(code, bwrap)
    seen = _observe(result)
    if result.verdict != "ok" or not isinstance(seen, list):
        return [Probe(name, False, _failure(result))]
    return [Probe(name, seen == ["lo"], "interfaces: " + ", ".join(seen))]


def _every_attempt_fails(name: str, code: str, bwrap: str | None, succeeded: str, failed: str) -> list[Probe]:
    """Run ``code``, which prints a JSON object of attempt -> whether it succeeded; the probe passes when none did.

    ``succeeded`` and ``failed`` are the words the detail uses for the attempts that got through and for all failing.
    """
    result = _probe_run(code, bwrap)
    seen = _observe(result)
    if result.verdict != "ok" or not seen:
        return [Probe(name, False, _failure(result))]
    through = [attempt for attempt, ok in seen.items() if ok]
    return [Probe(name, not through, f"{succeeded}: {through}" if through else f"all {len(seen)} {failed}")]


def _probe_outside(bwrap: str | None) -> list[Probe]:
    """Nothing outside is reachable, by address or by name."""
    name = "network: no route out (TCP to public addresses, DNS)"
    code = _ATTEMPTS + (
        "import socket\n"
        "hosts = ['1.1.1.1', '8.8.8.8', '2606:4700:4700::1111']\n"
        "seen = {h: attempt(lambda: socket.create_connection((h, 53), timeout=2).close()) for h in hosts}\n"
        "seen['dns example.com'] = attempt(lambda: socket.getaddrinfo('example.com', 80))\n"
        "print(json.dumps(seen))\n"
    )
    return _every_attempt_fails(name, code, bwrap, "reached", "failed")


def _probe_listener(name: str, listener: socket.socket, connect: str, target: str, accepted_as: str, bwrap: str | None) -> list[Probe]:
    """Have a fresh sandbox run ``connect`` (an expression that connects to the bound ``listener``, a host socket)
    and expect it to fail with the listener accepting nothing. ``target`` names the address in the detail and
    ``accepted_as`` the listener."""
    listener.listen()
    listener.setblocking(False)
    code = _ATTEMPTS + (f"import socket\nprint(json.dumps(attempt(lambda: {connect})))\n")
    result = _probe_run(code, bwrap)
    try:
        listener.accept()[0].close()
        accepted = True
    except BlockingIOError:
        accepted = False
    seen = _observe(result)
    if result.verdict != "ok" or seen not in (True, False):
        return [Probe(name, False, _failure(result))]
    return [Probe(name, not seen and not accepted, f"connect to the host's {target}: {'succeeded' if seen else 'failed'}; {accepted_as}: {accepted}")]


def _probe_host_loopback(bwrap: str | None) -> list[Probe]:
    """A listener on the host's 127.0.0.1 hears nothing from the sandbox."""
    name = "network: the host's loopback is unreachable"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        return _probe_listener(
            name,
            listener,
            f"socket.create_connection(('127.0.0.1', {port}), timeout=2).close()",
            f"127.0.0.1:{port}",
            "host listener accepted",
            bwrap,
        )


def _probe_abstract_socket(bwrap: str | None) -> list[Probe]:
    """Abstract UNIX sockets belong to the network namespace: a host daemon's (D-Bus, X11...) are out of reach."""
    name = "network: the host's abstract UNIX sockets are unreachable"
    address = f"\0parlour-probe-{os.getpid()}-{time.monotonic_ns()}"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(address)
        return _probe_listener(name, listener, f"socket.socket(socket.AF_UNIX).connect({address!r})", repr(address[1:]), "accepted", bwrap)


def _probe_raw_sockets(bwrap: str | None) -> list[Probe]:
    """Raw, packet and ping sockets need a capability (or a ping group) the program lacks."""
    name = "network: raw, packet and ping sockets are refused"
    code = _ATTEMPTS + (
        "import socket\n"
        "kinds = {'packet': (socket.AF_PACKET, socket.SOCK_RAW, 0), 'raw ICMP': (socket.AF_INET, socket.SOCK_RAW, 1),\n"
        "         'ping': (socket.AF_INET, socket.SOCK_DGRAM, 1), 'raw IPv6': (socket.AF_INET6, socket.SOCK_RAW, 58)}\n"
        "print(json.dumps({k: attempt(lambda: socket.socket(*v).close()) for k, v in kinds.items()}))\n"
    )
    return _every_attempt_fails(name, code, bwrap, "opened", "refused")


def _host_places() -> dict[str, str]:
    """Host folders that must stay out of the program's reach."""
    places = {
        "package": str(Path(__file__).resolve().parent.parent),
        "home": str(Path.home()),
        "/etc": "/etc",
        "/usr": "/usr",
        "interpreter prefix": os.path.realpath(sys.base_prefix),
    }
    if os.geteuid() == 0:
        places["/root"] = "/root"
    return places


def _probe_writes(bwrap: str | None) -> list[Probe]:
    """Writes to host folders fail inside and never show outside; the sandbox's own /tmp works."""
    name = "filesystem: writes outside the sandbox fail and never reach the host"
    filename = f"parlour-probe-{os.getpid()}-{time.monotonic_ns()}"
    folders = sorted(set(_host_places().values()))
    code = _ATTEMPTS + (
        f"folders = {folders + ['/tmp']!r}\n"
        f"write = lambda folder: open(os.path.join(folder, {filename!r}), 'w').write('escaped')\n"
        "print(json.dumps({folder: attempt(lambda: write(folder)) for folder in folders}))\n"
    )
    result = _probe_run(code, bwrap)
    seen = _observe(result)
    on_host = [folder for folder in folders + ["/tmp"] if os.path.exists(os.path.join(folder, filename))]
    for folder in on_host:
        os.unlink(os.path.join(folder, filename))
    if result.verdict != "ok" or not seen:
        return [Probe(name, False, _failure(result))]
    written = [folder for folder, ok in seen.items() if ok and folder != "/tmp"]
    detail = f"written inside: {written or 'none'}; on the host: {on_host or 'none'}"
    # Writing its own /tmp must work (it is the scratch space) and must not show on the host's /tmp.
    return [Probe(name, not written and not on_host and seen.get("/tmp") is True, detail)]


def _probe_reads(bwrap: str | None) -> list[Probe]:
    """Secrets, the home folder, the package and the host's /tmp are not in the sandbox."""
    name = "filesystem: host files are unreadable (/etc/shadow, home, the package, host /tmp)"
    prefix = os.path.realpath(sys.base_prefix)
    home = Path.home()
    with tempfile.NamedTemporaryFile("w", prefix="parlour-probe-") as marker:
        marker.write("secret")
        marker.flush()
        files = ["/etc/shadow", "/etc/passwd", marker.name, str(Path(__file__).resolve())]
        if home.is_dir():
            files += sorted(str(p) for p in home.iterdir() if p.is_file() and not p.is_symlink())[:3]
        folders = [str(home), str(Path(__file__).resolve().parent)]
        code = _ATTEMPTS + (
            f"files, folders = {files!r}, {folders!r}\n"
            "seen = {path: attempt(lambda: open(path, 'rb').read(64)) for path in files}\n"
            "seen.update({path: attempt(lambda: os.listdir(path)) for path in folders})\n"
            "print(json.dumps(seen))\n"
        )
        result = _probe_run(code, bwrap)
    seen = _observe(result)
    if result.verdict != "ok" or not seen:
        return [Probe(name, False, _failure(result))]
    leaked = []
    for path, found in seen.items():
        if path in folders and isinstance(found, list):
            # A home that holds the interpreter (pyenv, uv) shows the way down to its read-only prefix only.
            allowed = {Path(prefix).relative_to(path).parts[0]} if prefix.startswith(path.rstrip("/") + "/") else set()
            found = sorted(set(found) - allowed)
        if found:
            leaked.append(path)
    return [Probe(name, not leaked, f"readable: {leaked}" if leaked else f"all {len(seen)} denied or absent")]


def _probe_scratch_and_files(bwrap: str | None) -> list[Probe]:
    """The scratch tmpfs are bounded by ``scratch_mb``, and a file by ``max_file_mb``."""
    fill = (
        "import errno, json, os\n"
        "def fill(path, megabytes):\n"
        "    written = 0\n"
        "    try:\n"
        "        with open(path, 'wb') as out:\n"
        "            for _ in range(megabytes):\n"
        "                written += out.write(bytes(1 << 20))\n"
        "                out.flush()\n"
        "    except OSError as error:\n"
        "        return [written >> 20, errno.errorcode.get(error.errno, str(error.errno))]\n"
        "    return [written >> 20, None]\n"
    )
    with Sandbox(Limits(scratch_mb=4), bwrap=bwrap) as sandbox:
        scratch = sandbox.run(fill + "print(json.dumps({p: fill(p + '/fill', 8) for p in ('/tmp', '/dev/shm')}))")
        big = sandbox.run(fill + "print(json.dumps(fill('/tmp/big', 4)))", limits=Limits(max_file_mb=1))
    probes = []
    name = "filesystem: the scratch folders hold at most scratch_mb (/tmp and /dev/shm)"
    seen = _observe(scratch)
    if scratch.verdict != "ok" or not seen:
        probes.append(Probe(name, False, _failure(scratch)))
    else:
        held = all(megabytes <= 4 and error == "ENOSPC" for megabytes, error in seen.values())
        probes.append(Probe(name, held, "; ".join(f"{path}: {mb} MB written, then {error}" for path, (mb, error) in seen.items())))
    name = "filesystem: a file cannot outgrow max_file_mb"
    seen = _observe(big)
    if big.verdict != "ok" or not seen:
        probes.append(Probe(name, False, _failure(big)))
    else:
        probes.append(Probe(name, seen == [1, "EFBIG"], f"{seen[0]} MB written under a 1 MB limit, then {seen[1]}"))
    return probes


def _probe_warm_forgets(bwrap: str | None) -> list[Probe]:
    """A warm sandbox empties its scratch folders after each run, whatever the program left there."""
    name = "warm sandbox: files a run leaves (locked folders, links, fifos) are gone at the next run"
    litter = (
        "import os\n"
        "for folder in ('/tmp', '/dev/shm'):\n"
        "    open(folder + '/left', 'w').write('x')\n"
        "    os.makedirs(folder + '/locked/deep')\n"
        "    os.chmod(folder + '/locked', 0)\n"
        "    os.symlink('/usr', folder + '/link')\n"
        "    os.mkfifo(folder + '/fifo')\n"
    )
    census = "import json, os\nprint(json.dumps({f: sorted(os.listdir(f)) for f in ('/tmp', '/dev/shm')}))"
    first, after = _probe_run(litter, bwrap, follow_up=census)
    seen = _observe(after)
    if first.verdict != "ok" or after.verdict != "ok" or not seen:
        return [Probe(name, False, _failure(first if first.verdict != "ok" else after))]
    return [Probe(name, seen == {"/tmp": ["main.py"], "/dev/shm": []}, f"the next run sees {seen}")]


def _probe_environment(bwrap: str | None) -> list[Probe]:
    """No variable of the host's reaches the program, not even through /proc/*/environ."""
    name = "environment: the host's variables are invisible"
    variable, token = "PARLOUR_PROBE_SECRET", f"secret-{os.getpid()}-{time.monotonic_ns()}"
    code = (
        f"import json, os\ntoken = {token!r}\n"
        "leaks = [k for k, v in os.environ.items() if token in v or k == 'PARLOUR_PROBE_SECRET']\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    try:\n"
        "        if token.encode() in open(f'/proc/{pid}/environ', 'rb').read():\n"
        "            leaks.append(f'/proc/{pid}/environ')\n"
        "    except OSError:\n"
        "        pass\n"
        "print(json.dumps({'leaks': leaks, 'variables': sorted(os.environ)}))\n"
    )
    previous = os.environ.get(variable)
    os.environ[variable] = token
    try:
        result = _probe_run(code, bwrap)
    finally:
        if previous is None:
            del os.environ[variable]
        else:
            os.environ[variable] = previous
    seen = _observe(result)
    if result.verdict != "ok" or not seen:
        return [Probe(name, False, _failure(result))]
    if seen["leaks"]:
        return [Probe(name, False, f"leaked in {seen['leaks']}")]
    return [Probe(name, True, f"the program sees only {', '.join(seen['variables'])}")]


# What a program can learn about its own process and surroundings, in one run.
_FACTS = (
    _ATTEMPTS
    + """
import socket
lines = open('/proc/self/status').read().splitlines()
status = dict(line.split(':\\t', 1) for line in lines if ':\\t' in line)
open_fds = []
for fd in range(3, 1024):
    try:
        os.fstat(fd)
    except OSError:
        continue
    open_fds.append(fd)
namespaces = {}
for kind in ('user', 'pid', 'net', 'ipc', 'uts', 'mnt', 'cgroup'):
    try:
        namespaces[kind] = os.readlink('/proc/self/ns/' + kind)
    except OSError:
        namespaces[kind] = None
print(json.dumps({
    'uid': os.getuid(), 'gid': os.getgid(), 'groups': os.getgroups(),
    'effective': int(status['CapEff'], 16), 'permitted': int(status['CapPrm'], 16),
    'bounding': int(status['CapBnd'], 16), 'ambient': int(status.get('CapAmb', '0'), 16),
    'seccomp': status.get('Seccomp'), 'no_new_privs': status.get('NoNewPrivs'),
    'regain': {'setuid(0)': attempt(lambda: os.setuid(0)), 'setgid(0)': attempt(lambda: os.setgid(0)),
               'setgroups([0])': attempt(lambda: os.setgroups([0])),
               'chown to root': attempt(lambda: os.chown('/tmp/main.py', 0, 0))},
    'hostname': socket.gethostname(), 'sethostname': attempt(lambda: socket.sethostname('escaped')),
    'open_fds': open_fds, 'pid': os.getpid(), 'ppid': os.getppid(),
    'pids': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()),
    'sys': os.path.exists('/sys'), 'dev': sorted(os.listdir('/dev')), 'namespaces': namespaces,
}))
"""
)

# The bit of each capability the server keeps, in the kernel's capability sets.
_CAPABILITY_BITS = {"CAP_DAC_OVERRIDE": 1, "CAP_FOWNER": 3, "CAP_KILL": 5, "CAP_SETGID": 6, "CAP_SETUID": 7}

#: What /dev may hold: bubblewrap's minimal set, and the scratch /dev/shm.
ALLOWED_DEVICES = {"core", "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}


def _probe_facts(bwrap: str | None) -> list[Probe]:
    """Privileges, descriptors, hostname, processes, devices and namespaces, from one run's own view."""
    names = [
        "privileges: the program holds no capabilities and is not root",
        "privileges: root cannot be regained (setuid, setgid, setgroups, chown to root)",
        "seccomp: the filter is in force (no_new_privs, filter mode) and libseccomp knows every denied call",
        "descriptors: the program holds only stdin, stdout and stderr (nothing reaches the server's socket)",
        "UTS namespace: the sandbox's own hostname, which the program cannot change",
        "PID namespace: the program sees only its sandbox's processes (init, the server, itself)",
        "namespaces: user, PID, network, IPC, UTS, mount and cgroup namespaces are the sandbox's own",
        "filesystem: no /sys and no host devices in /dev",
        "privileges: the bounding set holds only the server's capabilities (CAP_SYS_ADMIN and the rest dropped)",
    ]
    result = _probe_run(_FACTS, bwrap)
    seen = _observe(result)
    if result.verdict != "ok" or not seen:
        return [Probe(name, False, _failure(result)) for name in names]
    unknown = _seccomp_program()[1]
    host_namespaces = {kind: os.readlink(f"/proc/self/ns/{kind}") for kind in seen["namespaces"] if os.path.exists(f"/proc/self/ns/{kind}")}
    shared = sorted(kind for kind, link in seen["namespaces"].items() if link is None or link == host_namespaces.get(kind))
    regained = [way for way, ok in seen["regain"].items() if ok]
    others = sorted(set(seen["pids"]) - {1, 2, seen["pid"]})
    devices = sorted(set(seen["dev"]) - ALLOWED_DEVICES)
    capabilities = (seen["effective"], seen["permitted"], seen["ambient"])
    # As root the server keeps ROOT_CAPABILITIES (in the sandbox's user namespace); as another user, none.
    kept = sum(1 << _CAPABILITY_BITS[name] for name in ROOT_CAPABILITIES) if os.geteuid() == 0 else 0
    return [
        Probe(
            names[0],
            seen["uid"] != 0 and seen["gid"] != 0 and not any(capabilities),
            f"uid {seen['uid']}, gid {seen['gid']}, groups {seen['groups']}, capabilities effective "
            f"{seen['effective']:#x}, permitted {seen['permitted']:#x}, ambient {seen['ambient']:#x}",
        ),
        Probe(names[1], not regained, f"succeeded: {regained}" if regained else f"all {len(seen['regain'])} refused"),
        Probe(
            names[2],
            seen["seccomp"] == "2" and seen["no_new_privs"] == "1" and not unknown,
            f"Seccomp: {seen['seccomp']}, NoNewPrivs: {seen['no_new_privs']}; denied calls libseccomp does not know here: {list(unknown) or 'none'}",
        ),
        Probe(names[3], not seen["open_fds"], f"descriptors open beyond 2: {seen['open_fds'] or 'none'}"),
        Probe(
            names[4],
            seen["hostname"] == "sandbox" and not seen["sethostname"],
            f"hostname {seen['hostname']!r}; sethostname {'succeeded' if seen['sethostname'] else 'refused'}",
        ),
        Probe(names[5], not others and seen["ppid"] == 2, f"pids {seen['pids']}: the program is {seen['pid']}, its parent {seen['ppid']}"),
        Probe(names[6], not shared, f"shared with the host: {shared}" if shared else f"all {len(seen['namespaces'])} differ from the host's"),
        Probe(names[7], not seen["sys"] and not devices, f"/sys {'present' if seen['sys'] else 'absent'}; /dev holds {', '.join(seen['dev'])}"),
        Probe(
            names[8], not seen["bounding"] & ~kept, f"bounding set {seen['bounding']:#x}, of which beyond the server's {seen['bounding'] & ~kept:#x}"
        ),
    ]


@functools.cache
def _syscall_numbers(names: tuple[str, ...]) -> dict[str, int]:
    """This architecture's numbers of the system calls ``names``, from libseccomp; calls it lacks are left out."""
    import pyseccomp as seccomp

    numbers = {}
    for name in names:
        number = seccomp.resolve_syscall(seccomp.Arch.NATIVE, name)
        if number >= 0:
            numbers[name] = number
    return numbers


#: The attacks the seccomp probes try, one probe per family, written independently of :data:`DENIED_SYSCALLS` (and
#: of the ioctl, clone and socket rules), so that a call missing from the filter shows as a call let through:
#: each call with arguments as Python source evaluated in the probe program (``buf(n)``: the address of n zeroed
#: bytes; ``text(s)``: of a C string; ``fd(path)``: a descriptor; ``tty()``: a pseudo-terminal; ``ppid``: the
#: server).
SECCOMP_FAMILIES = {
    "user and network namespaces (unshare)": [("unshare", "0x10000000"), ("unshare", "0x40000000")],
    "new namespaces through clone's flags": [
        ("clone", f"{flag:#x} | 17, 0, 0, 0, 0") for flag in (0x80, 0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000)
    ],
    "clone3, whose flags the filter cannot read (ENOSYS: the C library falls back to clone)": [("clone3", "buf(88), 1")],
    "joining namespaces (setns)": [("setns", "-1, 0"), ("setns", "fd('/proc/self/ns/uts'), 0")],
    "io_uring": [("io_uring_setup", "8, buf(120)"), ("io_uring_enter", "-1, 0, 0, 0, 0, 0"), ("io_uring_register", "-1, 0, 0, 0")],
    "keyrings (add_key, keyctl, request_key)": [
        ("add_key", "text('user'), text('parlour-probe'), text('x'), 1, -3"),
        ("keyctl", "0, -3, 0"),
        ("request_key", "text('user'), text('parlour-probe'), 0, 0"),
    ],
    "SysV message queues": [
        ("msgget", "0, 0o1600"),
        ("msgsnd", "-1, buf(16), 8, 0"),
        ("msgrcv", "-1, buf(16), 8, 0, 0"),
        ("msgctl", "-1, 2, buf(256)"),
    ],
    "SysV semaphores": [("semget", "0, 1, 0o1600"), ("semop", "-1, buf(8), 1"), ("semtimedop", "-1, buf(8), 1, 0"), ("semctl", "-1, 0, 2, 0")],
    "SysV shared memory": [("shmget", "0, 4096, 0o1600"), ("shmat", "-1, 0, 0"), ("shmdt", "0"), ("shmctl", "-1, 2, buf(256)")],
    "POSIX message queues (mq_open, ...)": [
        ("mq_open", "text('parlour-probe'), 0o100 | 2, 0o600, 0"),
        ("mq_unlink", "text('parlour-probe')"),
        ("mq_timedsend", "-1, buf(8), 8, 0, 0"),
        ("mq_timedreceive", "-1, buf(8), 8, 0, 0"),
        ("mq_notify", "-1, 0"),
        ("mq_getsetattr", "-1, 0, buf(64)"),
    ],
    "sockets of every family but AF_UNIX (inet, netlink, packet, vsock...)": [
        *[("socket", f"{family}, 1, 0") for family in (0, *range(2, 46), 64, 255, 1 << 32 | 2)],
        ("socketpair", "2, 1, 0, buf(8)"),
        ("socketpair", "10, 1, 0, buf(8)"),
        ("socketpair", "40, 1, 0, buf(8)"),
    ],
    "tracing the server and init (ptrace)": [("ptrace", "16, ppid, 0, 0"), ("ptrace", "16, 1, 0, 0")],
    "other processes' memory and descriptors (process_vm_*, pidfd_getfd, kcmp)": [
        ("process_vm_readv", "ppid, buf(16), 1, buf(16), 1, 0"),
        ("process_vm_writev", "ppid, buf(16), 1, buf(16), 1, 0"),
        ("pidfd_getfd", "-1, 0, 0"),
        ("kcmp", "os.getpid(), os.getpid(), 0, 0, 0"),
    ],
    "mounts (mount, umount2)": [("mount", "text('none'), text('/tmp'), text('tmpfs'), 0, 0"), ("umount2", "text('/tmp'), 2")],
    "changing the root (pivot_root, chroot)": [("pivot_root", "text('/tmp'), text('/tmp')"), ("chroot", "text('/tmp')")],
    "the new mount API (fsopen, open_tree, ...)": [
        ("fsopen", "text('tmpfs'), 0"),
        ("open_tree", "-100, text('/tmp'), 0"),
        ("fspick", "-100, text('/tmp'), 0"),
        ("fsconfig", "-1, 0, 0, 0, 0"),
        ("fsmount", "-1, 0, 0"),
        ("move_mount", "-1, text(''), -1, text(''), 0"),
        ("mount_setattr", "-1, text(''), 0, 0, 0"),
    ],
    "eBPF (bpf)": [("bpf", "0, buf(128), 128"), ("bpf", "5, buf(128), 128")],
    "performance counters (perf_event_open)": [("perf_event_open", "buf(128), 0, -1, -1, 0")],
    "kexec (kexec_load, kexec_file_load)": [("kexec_load", "0, 0, 0, 0"), ("kexec_file_load", "-1, -1, 0, text(''), 0")],
    "kernel modules (init_module, finit_module, delete_module)": [
        ("init_module", "buf(16), 16, text('')"),
        ("finit_module", "-1, text(''), 0"),
        ("delete_module", "text('parlour'), 0"),
    ],
    "terminal input injection (ioctl TIOCSTI, TIOCLINUX)": [("ioctl", "tty(), 0x5412, buf(1)"), ("ioctl", "tty(), 0x541C, buf(1)")],
    "userfaultfd": [("userfaultfd", "1")],
    "the clock (settimeofday, clock_settime, clock_adjtime, adjtimex)": [
        ("settimeofday", "buf(16), 0"),
        ("clock_settime", "0, buf(16)"),
        ("clock_adjtime", "0, buf(256)"),
        ("adjtimex", "buf(256)"),
    ],
    "execution domains (personality: ASLR off)": [("personality", "0x0040000")],
    "file handles (name_to_handle_at, open_by_handle_at)": [
        ("name_to_handle_at", "-100, text('/tmp'), buf(136), buf(8), 0"),
        ("open_by_handle_at", "-1, buf(136), 0"),
    ],
    "kernel log, accounting, quotas, swap, reboot": [
        ("syslog", "10, 0, 0"),
        ("acct", "0"),
        ("quotactl", "0, 0, 0, 0"),
        ("swapon", "text('/tmp/main.py'), 0"),
        ("swapoff", "text('/tmp/main.py')"),
        ("reboot", "0, 0, 0, 0"),
    ],
    "I/O ports (iopl, ioperm)": [("iopl", "3"), ("ioperm", "0, 1, 1")],
    "profiling, filesystem-wide notification, terminals and obsolete calls": [
        ("lookup_dcookie", "0, buf(8), 8"),
        ("fanotify_init", "0, 0"),
        ("vhangup", "()"),
        ("uselib", "text('/tmp/main.py')"),
        ("sysfs", "3"),
        ("nfsservctl", "0, 0, 0"),
    ],
}

# Tries each call of SECCOMP_FAMILIES (CALLS: family, name, number, arguments) and prints the errno of each. First it
# adds a filter of its own that answers every one of those calls SECCOMP_RET_TRACE: with no tracer the kernel then
# skips the call and answers ENOSYS, unless the sandbox's filter refused it, whose ERRNO outranks TRACE. So EPERM
# is the sandbox's filter speaking, never the kernel's own refusal (which an unprivileged program gets from mount or
# reboot with or without a filter), and no call runs, let through or not. clone3, which the sandbox's filter answers
# ENOSYS, goes past the probe's filter, with a size the kernel refuses (EINVAL) before it would make a process.
_SYSCALLS = """
import ctypes, json, os, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
kept, ppid = [], os.getppid()

def buf(size):
    kept.append(ctypes.create_string_buffer(size))
    return ctypes.addressof(kept[-1])

def text(value):
    kept.append(ctypes.create_string_buffer(value.encode()))
    return ctypes.addressof(kept[-1])

def fd(path):
    return os.open(path, os.O_RDONLY)

def tty():
    # A terminal if one opens, else stdin: the filter answers before the kernel looks at the descriptor.
    try:
        return os.open('/dev/ptmx', os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return 0

class Program(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]

def trace(numbers):
    # BPF: load the call's number; each of these jumps to SECCOMP_RET_TRACE, anything else falls to SECCOMP_RET_ALLOW.
    code = struct.pack('=HBBI', 0x20, 0, 0, 0)
    for index, number in enumerate(numbers):
        code += struct.pack('=HBBI', 0x15, len(numbers) - index, 0, number)
    code += struct.pack('=HBBI', 0x06, 0, 0, 0x7fff0000) + struct.pack('=HBBI', 0x06, 0, 0, 0x7ff00000)
    program = Program(len(code) // 8, buf(len(code)))
    ctypes.memmove(program.filter, code, len(code))
    if libc.prctl(22, 2, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'prctl(PR_SET_SECCOMP)')

prepared = []
for family, name, number, arguments in CALLS:
    try:
        values = eval(arguments)
    except OSError as error:
        values = 'setup: ' + str(error)
    prepared.append((family, name, number, values if isinstance(values, (tuple, str)) else (values,)))
trace(sorted({number for _, name, number, _ in CALLS if name != 'clone3'}))
seen = {}
for family, name, number, values in prepared:
    if not isinstance(values, str):
        ctypes.set_errno(0)
        result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(v) for v in values])
        values = 0 if result >= 0 else ctypes.get_errno()
    seen.setdefault(family, []).append([name, values])
print(json.dumps(seen))
"""


def _answer(code: int | str) -> str:
    """A system call's answer as a probe program reported it: SUCCEEDED, an errno name, or what went wrong."""
    if not isinstance(code, int):
        return code
    return "SUCCEEDED" if code == 0 else errno.errorcode.get(code, str(code))


def _seccomp_answer(call: str, code: int | str) -> str:
    """A seccomp probe's answer in words: the filter's refusal, or the call let through (the probe's own filter then
    answered ENOSYS for it; clone3 let through answers EINVAL)."""
    through = errno.EINVAL if call == "clone3" else errno.ENOSYS
    return "LET THROUGH" if code == through else _answer(code)


def _probe_seccomp(bwrap: str | None) -> list[Probe]:
    """One probe per family of attacks: the sandbox's filter must refuse each call, EPERM (clone3: ENOSYS).

    The calls come from :data:`SECCOMP_FAMILIES`, not from the deny-list, and the probe program tells the filter's
    refusal from the kernel's (see ``_SYSCALLS``): a filter built without any one entry fails a probe here. A call
    this architecture lacks is left out.
    """
    names = tuple(sorted({name for tries in SECCOMP_FAMILIES.values() for name, _ in tries}))
    numbers = _syscall_numbers(names)
    calls = [(family, name, numbers[name], arguments) for family, tries in SECCOMP_FAMILIES.items() for name, arguments in tries if name in numbers]
    families = list(dict.fromkeys(family for family, *_ in calls))
    result = _probe_run(f"CALLS = {calls!r}\n" + _SYSCALLS, bwrap)
    seen = _observe(result)
    probes = []
    for family in families:
        name = f"seccomp: {family} refused"
        if result.verdict != "ok" or not seen:
            probes.append(Probe(name, False, _failure(result)))
            continue
        answers = seen.get(family, [])
        expected = {call: errno.ENOSYS if call == "clone3" else errno.EPERM for call, _ in answers}
        held = bool(answers) and all(answer == expected[call] for call, answer in answers)
        words = [f"{call} {_seccomp_answer(call, answer)}" for call, answer in answers]
        # Many calls of one name (socket's families): say how many answered alike.
        probes.append(Probe(name, held, ", ".join(f"{word} x{count}" if count > 1 else word for word, count in Counter(words).items())))
    return probes


#: One probe per family of the masked /proc files: each reads empty, or the sandbox's own figures.
PROC_FAMILIES = {
    "kernel symbols and modules": ("kallsyms", "modules"),
    "keys of every user": ("keys", "key-users"),
    "timers and the scheduler": ("timer_list", "sched_debug"),
    "interrupts": ("interrupts", "softirqs"),
    "memory (the sandbox's budget in meminfo)": ("meminfo", "vmstat", "zoneinfo", "buddyinfo", "pagetypeinfo", "slabinfo"),
    "CPU times, load and uptime": ("stat", "loadavg", "uptime"),
    "devices and storage": ("diskstats", "partitions", "swaps", "iomem", "ioports"),
    "locks, latency and cgroups": ("locks", "latency_stats", "cgroups"),
    "SysV IPC tables": ("sysvipc/msg", "sysvipc/sem", "sysvipc/shm"),
    "pressure stall figures": ("pressure/cpu", "pressure/memory", "pressure/io", "pressure/irq"),
    "open files and inodes (file-nr, inode-nr)": ("sys/fs/file-nr", "sys/fs/inode-nr"),
    "boot id and kernel command line": ("sys/kernel/random/boot_id", "cmdline"),
    "CPU model (cpuinfo lists the sandbox's processors only)": ("cpuinfo",),
}


def _probe_proc(bwrap: str | None) -> list[Probe]:
    """Host figures in /proc: every masked file reads empty or shows the sandbox's own figures."""
    limits = Limits()
    figures = _proc_figures(limits)
    files = [name for names in PROC_FAMILIES.values() for name in names]
    code = (
        "import json\nseen = {}\n"
        f"for name in {files!r}:\n"
        "    try:\n"
        "        seen[name] = open('/proc/' + name, errors='replace').read(4096)\n"
        "    except FileNotFoundError:\n"
        "        seen[name] = None\n"
        "    except OSError as error:\n"
        "        seen[name] = 'unreadable: ' + str(error)\n"
        "print(json.dumps(seen))\n"
    )
    result = _probe_run(code, bwrap, limits)
    seen = _observe(result)
    probes = []
    for family, names in PROC_FAMILIES.items():
        name = f"/proc: {family} show nothing of the host"
        if result.verdict != "ok" or not seen:
            probes.append(Probe(name, False, _failure(result)))
            continue
        leaks, words = [], []
        for file in names:
            content = seen.get(file)
            expected = figures[file].decode() if file in figures else ""
            # Absent in the sandbox is fine only where the host has no such file either.
            if content is None and not os.path.exists(f"/proc/{file}"):
                words.append(f"{file} absent")
            elif content == expected:
                words.append(f"{file} {'the sandbox figures' if expected else 'empty'}")
            else:
                leaks.append(file)
                words.append(f"{file} shows {str(content)[:60]!r}")
        probes.append(Probe(name, not leaks, "; ".join(words)))
    return probes


# Who and where a program is, as it can tell: all alike in every slot but the user namespace's identity.
_WHO = """
import json, os, socket, tempfile
print(json.dumps({
    'uid': os.getuid(), 'gid': os.getgid(), 'groups': os.getgroups(), 'hostname': socket.gethostname(),
    'cwd': os.getcwd(), 'tempdir': tempfile.gettempdir(), 'pid': os.getpid(), 'ppid': os.getppid(),
    'cgroup': sorted(set(line.split(':', 2)[2] for line in open('/proc/self/cgroup').read().splitlines())),
    'owners': [os.stat(path).st_uid for path in ('/tmp', '/dev/shm', 'main.py')],
    'user namespace': os.readlink('/proc/self/ns/user'),
}))
"""


def _probe_slots(bwrap: str | None) -> list[Probe]:
    """Concurrent sandboxes are different users on the host, alike inside; one holding its process limit leaves the
    other's forks alone."""
    probes = []
    with Sandbox(bwrap=bwrap) as first, Sandbox(bwrap=bwrap) as second:
        one, two = first.run(_WHO), second.run(_WHO)
        hosts = first.uid, second.uid
    a, b = _observe(one), _observe(two)
    name = "uid per slot: two concurrent sandboxes run as different users on the host, each in a user namespace"
    if one.verdict != "ok" or two.verdict != "ok" or not a or not b:
        probes.append(Probe(name, False, _failure(one if one.verdict != "ok" else two)))
    else:
        # As root each slot has a host uid of its own; as another user, both are that user, each in a namespace.
        apart = hosts[0] != hosts[1] and not set(hosts) & {0, 65534} if os.geteuid() == 0 else hosts == (None, None)
        held = apart and a["user namespace"] != b["user namespace"]
        probes.append(Probe(name, held, f"host uids {hosts[0]} and {hosts[1]}; user namespaces {a['user namespace']} and {b['user namespace']}"))
    name = "replay: every slot shows a program the same uid, gid, hostname, folders, process ids and cgroup"
    if one.verdict != "ok" or two.verdict != "ok" or not a or not b:
        probes.append(Probe(name, False, _failure(one if one.verdict != "ok" else two)))
    else:
        del a["user namespace"], b["user namespace"]
        differ = sorted(key for key in a if a[key] != b.get(key))
        probes.append(
            Probe(
                name,
                not differ,
                f"differ: {differ}"
                if differ
                else f"alike: uid {a['uid']}, gid {a['gid']}, hostname {a['hostname']!r}, cwd {a['cwd']}, pid {a['pid']}, cgroup {a['cgroup']!r}",
            )
        )
    name = "processes: a neighbour holding its whole process limit does not stop forks here"
    limits = Limits(max_processes=16, wall_seconds=10)
    holder = "import os, time\nfor _ in range(15):\n    if os.fork() == 0:\n        time.sleep(30)\n        os._exit(0)\ntime.sleep(30)\n"
    forker = "import os\nfor _ in range(8):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n    os.waitpid(pid, 0)\nprint('forked')"
    with Sandbox(limits, bwrap=bwrap) as first, Sandbox(limits, bwrap=bwrap) as second:
        result, _held = _beside(first, holder, limits, 16, lambda: second.run(forker))
    probes.append(
        Probe(
            name,
            (result.verdict, result.stdout) == ("ok", "forked\n"),
            f"the neighbour's forks: verdict {result.verdict}, {result.stderr.strip()[-200:]!r}",
        )
    )
    return probes


def _probe_fork_bomb(bwrap: str | None) -> list[Probe]:
    """A fork bomb stops at the process limit, and the next run finds the sandbox empty."""
    name = "processes: a fork bomb hits the process limit and leaves nothing behind"
    limit = 16
    code = (
        "import os, time\n"
        "forked = 0\n"
        "for _ in range(500):\n"
        "    try:\n"
        "        pid = os.fork()\n"
        "    except OSError:\n"
        "        break\n"
        "    if pid == 0:\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
        "    forked += 1\n"
        "print(forked)\n"
    )
    bomb, after = _probe_run(code, bwrap, Limits(max_processes=limit, wall_seconds=5), follow_up=_CENSUS)
    if bomb.verdict != "ok" or after.verdict != "ok":
        return [Probe(name, False, _failure(bomb if bomb.verdict != "ok" else after))]
    forked, left = int(bomb.stdout), int(after.stdout)
    # After it: the namespace's init, the server and the census itself.
    held = forked < limit and left <= 3 and bomb.wall_seconds < 5
    return [Probe(name, held, f"{forked} forks succeeded under a limit of {limit}; {left} processes in the sandbox at the next run")]


# How many processes the sandbox holds, seen from inside.
_CENSUS = "import os\nprint(sum(p.isdigit() for p in os.listdir('/proc')))"


def _probe_daemon(bwrap: str | None) -> list[Probe]:
    """A child that leaves the program's session and spins does not hold up the verdict or outlive the run."""
    name = "processes: a setsid() daemon that spins is killed at the end of its run, which ends ok"
    code = "import os\nif os.fork() == 0:\n    os.setsid()\n    while True:\n        pass\nprint('left')"
    run, after = _probe_run(code, bwrap, follow_up=_CENSUS)
    if run.verdict != "ok" or after.verdict != "ok":
        return [Probe(name, False, _failure(run if run.verdict != "ok" else after))]
    return [
        Probe(name, int(after.stdout) <= 3, f"verdict {run.verdict} after {run.wall_seconds:.2f} s; {after.stdout.strip()} processes at the next run")
    ]


def _probe_pid_numbering(bwrap: str | None) -> list[Probe]:
    """Fresh sandboxes number processes alike: no PID state passes between them (warm runs do carry it)."""
    name = "PID numbering: every fresh sandbox starts alike (no state from earlier sandboxes)"
    code = "import os\nprint(os.getpid())"
    first, second = _probe_run(code, bwrap), _probe_run(code, bwrap)
    if first.verdict != "ok" or second.verdict != "ok":
        return [Probe(name, False, _failure(first if first.verdict != "ok" else second))]
    return [
        Probe(name, first.stdout == second.stdout, f"process ids of two fresh sandboxes' programs: {first.stdout.strip()}, {second.stdout.strip()}")
    ]


def _probe_verdict(name: str, code: str, limits: Limits, expected: Verdict, bwrap: str | None) -> list[Probe]:
    """Run ``code`` in a fresh sandbox and expect ``expected``."""
    result = _probe_run(code, bwrap, limits)
    return [
        Probe(
            name,
            result.verdict == expected,
            f"verdict {result.verdict} after {result.wall_seconds:.2f} s wall, {result.cpu_seconds:.2f} s CPU, "
            f"{len(result.stdout) + len(result.stderr)} bytes of output",
        )
    ]


# Three children and the parent each take and touch 48 MB (192 MB), then the parent says what they hold together;
# it gives up as soon as a child dies (the kernel's OOM kill), rather than wait for the wall clock.
_FOUR_HOARDERS = """
import os, signal, time
signal.signal(signal.SIGCHLD, lambda *_: os._exit(1))
ready = os.pipe()
for _ in range(3):
    if os.fork() == 0:
        hoard = bytearray(48 << 20)
        os.write(ready[1], b"x")
        time.sleep(30)
hoard = bytearray(48 << 20)
held = 1
while held < 4:
    held += len(os.read(ready[0], 4 - held))
print("held", held * 48, "MB")
"""

# Four processes each fill 14 pipes of 1 MB (56 MB of kernel buffers, within the kernel's per-user pipe quota) and
# hold 20 MB: 136 MB in all.
_PIPE_HOARDERS = """
import fcntl, os, time
for _ in range(2):
    os.fork()
hoard = bytearray(20 << 20)
pipes = []
for _ in range(14):
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 1 << 20)
    os.set_blocking(w, False)
    os.write(w, b'p' * (1 << 20))
    pipes.append((r, w))
print('filled')
time.sleep(1)
"""


def _probe_memory(bwrap: str | None) -> list[Probe]:
    """Memory is one budget for the sandbox: a bomb, four processes together, pipe buffers."""
    return [
        *_probe_verdict(
            "memory: a memory bomb ends with verdict memory",
            "hoard = []\nwhile True:\n    hoard.append(bytearray(16 << 20))",
            Limits(memory_mb=256),
            "memory",
            bwrap,
        ),
        *_probe_verdict(
            "memory: 4 processes of 48 MB cannot hold 192 MB under memory_mb=128 together", _FOUR_HOARDERS, Limits(memory_mb=128), "memory", bwrap
        ),
        *_probe_verdict(
            "memory: pipe buffers count (4 processes, 56 MB of pipes, 80 MB held, memory_mb=96)",
            _PIPE_HOARDERS,
            Limits(memory_mb=96),
            "memory",
            bwrap,
        ),
    ]


def _probe_forgery(bwrap: str | None) -> list[Probe]:
    """A program cannot choose its verdict: not memory by its own word, not a pass by printing a report."""
    probes = []
    name = "verdict: MemoryError raised, or SIGKILL sent to itself, is error, not memory"
    raised = _probe_run("raise MemoryError", bwrap)
    killed = _probe_run("import os\nos.kill(os.getpid(), 9)", bwrap)
    probes.append(
        Probe(
            name, (raised.verdict, killed.verdict) == ("error", "error"), f"raise MemoryError: {raised.verdict}; SIGKILL to itself: {killed.verdict}"
        )
    )
    name = "verdict: fake result frames and server reports on stdout, stderr and other descriptors change nothing"
    code = (
        "import os, sys\n"
        'frames = \'\\x1e["load","ok",""]\\n\' + \'\'.join(\'\\x1e[%d,"pass","",""]\\n\' % i for i in range(8))\n'
        "report = 'done 0 - 0.000001 0.000001 -'\n"
        "sys.stdout.write(frames + report)\nsys.stderr.write(frames + report)\nsys.stdout.flush()\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, report.encode())\n"
        "    except OSError:\n"
        "        pass\n"
        "os._exit(3)\n"
    )
    result = _probe_run(code, bwrap)
    probes.append(
        Probe(
            name, (result.verdict, result.exit_code) == ("error", 3), f"verdict {result.verdict}, exit code {result.exit_code} (the program exited 3)"
        )
    )
    name = "verdict: the program cannot kill the server or init; the next run is served by the same sandbox"
    attack = _ATTEMPTS + (
        "import signal\n"
        "seen = {'server': attempt(lambda: os.kill(os.getppid(), signal.SIGKILL)),\n"
        "        'init': attempt(lambda: os.kill(1, signal.SIGKILL))}\n"
        "os.kill(-1, signal.SIGKILL)\n"
        "print(json.dumps(seen))\n"
    )
    with Sandbox(bwrap=bwrap) as sandbox:
        server = sandbox._process
        first = sandbox.run(attack)
        second = sandbox.run("print('served')")
        same = sandbox._process is server
    seen = _observe(first)
    if first.verdict != "ok" or not seen:
        probes.append(Probe(name, False, _failure(first)))
    else:
        killed = [target for target, ok in seen.items() if ok]
        held = not killed and second.stdout == "served\n" and same
        probes.append(
            Probe(name, held, f"signals delivered to: {killed or 'none'}; next run: {second.verdict}, {'same' if same else 'a restarted'} sandbox")
        )
    return probes


def _probe_time(bwrap: str | None) -> list[Probe]:
    """CPU and wall-clock limits, and the output cap."""
    return [
        *_probe_verdict(
            "time: an infinite loop ends with verdict timeout (CPU limit)",
            "while True:\n    pass",
            Limits(cpu_seconds=1, wall_seconds=10),
            "timeout",
            bwrap,
        ),
        *_probe_verdict(
            "time: a sleeper ends with verdict timeout (wall-clock limit)", "import time\ntime.sleep(60)", Limits(wall_seconds=1), "timeout", bwrap
        ),
        *_probe_verdict(
            "time: SIGXCPU sent to itself ends with verdict error (the CPU time decides a timeout)",
            "import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)",
            Limits(cpu_seconds=1, wall_seconds=10),
            "error",
            bwrap,
        ),
        *_probe_verdict(
            "output: a flood of output ends with verdict output_limit",
            "while True:\n    print('x' * 1000)",
            Limits(max_output_bytes=64 << 10),
            "output_limit",
            bwrap,
        ),
    ]


def _probe_starvation(bwrap: str | None) -> list[Probe]:
    """A neighbour spinning in 32 sessions cannot turn an honest run's ok into a timeout.

    Both sandboxes are pinned to one CPU, so that the probe tells a fair share (half the CPU: 0.6 s for 0.3 s of
    work) from none (a 33rd of it: 10 s) on a machine of any size.
    """
    name = "CPU: a neighbour spinning in 32 sessions on the same CPU does not starve a run here into timeout"
    spinners = 32
    hog = f"import os\nfor _ in range({spinners - 1}):\n    if os.fork() == 0:\n        os.setsid()\n        break\nwhile True:\n    pass"
    worker = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end:\n    pass\nprint('done')"
    cpu = {min(os.sched_getaffinity(0))}
    with Sandbox(bwrap=bwrap) as spinning, Sandbox(bwrap=bwrap) as honest:
        for sandbox in (spinning, honest):
            # Init and the server: every process they fork inherits the affinity.
            if sandbox._cgroup is not None:
                for pid in (sandbox._cgroup.memory / "cgroup.procs").read_text().split():
                    os.sched_setaffinity(int(pid), cpu)
        result, _hog = _beside(
            spinning,
            hog,
            Limits(max_processes=40, cpu_seconds=30, wall_seconds=30),
            spinners,
            lambda: honest.run(worker, limits=Limits(cpu_seconds=1, wall_seconds=5)),
        )
    return [
        Probe(
            name,
            (result.verdict, result.stdout) == ("ok", "done\n"),
            f"verdict {result.verdict} after {result.wall_seconds:.2f} s wall for {result.cpu_seconds:.2f} s CPU",
        )
    ]


def _bwrap_stat(pid: int) -> tuple[str, int] | None:
    """The state letter and parent of ``pid`` if it is a bubblewrap process, else None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    if "(bwrap)" not in stat:
        return None
    state, parent = stat.rsplit(")", 1)[1].split()[:2]
    return state, int(parent)


def _probe_zombies(bwrap: str | None) -> list[Probe]:
    """Closing a sandbox reaps bubblewrap and the namespace's init: no zombie stays on the host."""
    name = "teardown: closing a sandbox leaves no zombie (bubblewrap and the namespace's init reaped)"
    sandbox = Sandbox(bwrap=bwrap)
    try:
        sandbox.run("pass")
        assert sandbox._process is not None  # the run left its server up
        outer = sandbox._process.pid
        inner = [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc"))) if (_bwrap_stat(pid) or ("", 0))[1] == outer]
    finally:
        sandbox.close()
    left = {pid: stat[0] for pid in [outer, *inner] if (stat := _bwrap_stat(pid)) is not None}
    return [Probe(name, bool(inner) and not left, f"bubblewrap {outer} and init {inner}: left after close: {left or 'none'}")]


def _probe_signals(bwrap: str | None) -> list[Probe]:
    """No host process, the caller included, can be signalled from the sandbox."""
    name = "signals: the program cannot signal its caller or any host process"
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        code = _ATTEMPTS + (
            "import signal\n"
            f"targets = {{'every process (-1)': -1, 'parent': os.getppid(), 'init': 1, 'caller': {os.getpid()}, "
            f"'host bystander': {bystander.pid}}}\n"
            "print(json.dumps({k: attempt(lambda: os.kill(pid, signal.SIGKILL)) for k, pid in targets.items()}))\n"
        )
        result = _probe_run(code, bwrap)
        time.sleep(0.05)
        alive = bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()
    seen = _observe(result)
    # kill(-1) reports success even when every process refuses the signal, so the evidence is on the host's
    # side: the bystander lives (and so does the caller, which is running this).
    detail = f"host bystander alive: {alive}; the run ended with verdict {result.verdict}" + (
        f"; kill() raised no error for: {', '.join(k for k, ok in seen.items() if ok) or 'none'}" if seen else ""
    )
    return [Probe(name, alive, detail)]


def _probe_state_between_runs(bwrap: str | None) -> list[Probe]:
    """Keys, SysV objects and POSIX message queues, which outlive a program, cannot carry a message to a later run."""
    numbers = _syscall_numbers(("add_key", "keyctl", "request_key", "msgget", "semget", "shmget", "mq_open"))
    helpers = (
        "import ctypes, json\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
        "def s(value):\n    return ctypes.c_char_p(value.encode())\n"
        "def call(name, *args):\n"
        "    ctypes.set_errno(0)\n"
        f"    result = libc.syscall(ctypes.c_long({numbers!r}[name]), *args)\n"
        "    return 0 if result >= 0 else ctypes.get_errno()\n"
    )
    description = f"parlour-probe-{os.getpid()}-{time.monotonic_ns()}"
    plant = helpers + (
        f"print(json.dumps({{'add_key to the user keyring': call('add_key', s('user'), s({description!r}), s('x'), "
        "ctypes.c_long(1), ctypes.c_long(-4)), 'keyctl: the user keyring': call('keyctl', ctypes.c_long(0), "
        "ctypes.c_long(-4), ctypes.c_long(1))}))\n"
    )
    find = helpers + (
        f"print(json.dumps({{'request_key': call('request_key', s('user'), s({description!r}), None, ctypes.c_long(0)),"
        f" 'keyctl search': call('keyctl', ctypes.c_long(10), ctypes.c_long(-4), s('user'), s({description!r}), "
        "ctypes.c_long(0))}))\n"
    )
    probes = []
    name = "keyrings: a key planted by one run cannot be read by the next sandbox"
    planted, found = _probe_run(plant, bwrap), _probe_run(find, bwrap)
    try:
        on_host = description in Path("/proc/keys").read_text()
    except OSError:
        on_host = False
    answers = {**_observe(planted), **_observe(found)}
    if planted.verdict != "ok" or found.verdict != "ok" or not answers:
        probes.append(Probe(name, False, _failure(planted if planted.verdict != "ok" else found)))
    else:
        held = all(answer == errno.EPERM for answer in answers.values()) and not on_host
        words = [f"{call}: {_answer(answer)}" for call, answer in answers.items()]
        probes.append(Probe(name, held, ", ".join(words) + f"; on the host: {on_host}"))
    name = "SysV IPC and POSIX message queues: a queue, semaphore or segment made by one run cannot reach the next in the same sandbox"
    key, queue = 0x5A17, "parlour-probe"
    create = helpers + (
        f"print(json.dumps({{'msgget create': call('msgget', {key}, 0o1600), 'semget create': call('semget', {key}, 1, "
        f"0o1600), 'shmget create': call('shmget', {key}, 4096, 0o1600), 'mq_open create': call('mq_open', "
        f"s({queue!r}), 0o102, 0o600, None)}}))\n"
    )
    look = helpers + (
        f"print(json.dumps({{'msgget find': call('msgget', {key}, 0), 'semget find': call('semget', {key}, 0, 0), "
        f"'shmget find': call('shmget', {key}, 0, 0), 'mq_open find': call('mq_open', s({queue!r}), 2, 0, None)}}))\n"
    )
    made, seen = _probe_run(create, bwrap, follow_up=look)
    answers = {**_observe(made), **_observe(seen)}
    if made.verdict != "ok" or seen.verdict != "ok" or not answers:
        probes.append(Probe(name, False, _failure(made if made.verdict != "ok" else seen)))
    else:
        probes.append(
            Probe(
                name,
                all(answer == errno.EPERM for answer in answers.values()),
                ", ".join(f"{call}: {_answer(answer)}" for call, answer in answers.items()),
            )
        )
    return probes


#: The probe suite, in the order ``parlour doctor sandbox`` prints it.
PROBES = (
    _probe_interfaces,
    _probe_outside,
    _probe_host_loopback,
    _probe_abstract_socket,
    _probe_raw_sockets,
    _probe_writes,
    _probe_reads,
    _probe_scratch_and_files,
    _probe_warm_forgets,
    _probe_environment,
    _probe_facts,
    _probe_seccomp,
    _probe_proc,
    _probe_slots,
    _probe_fork_bomb,
    _probe_daemon,
    _probe_pid_numbering,
    _probe_memory,
    _probe_forgery,
    _probe_time,
    _probe_starvation,
    _probe_zombies,
    _probe_signals,
    _probe_state_between_runs,
)


def run_probes(*, bwrap: str | None = None) -> list[Probe]:
    """Run every containment probe on the real sandbox (fresh sandboxes, warm ones where a probe says so).

    One probe per attack class: the network (interfaces, routes out, the host's loopback and abstract sockets, raw
    sockets), the filesystem (host writes and reads, scratch and file sizes, what a warm run leaves), the
    environment, privileges and the bounding set, descriptors, hostname, PID and other namespaces, each family of
    an attack list against the seccomp filter (its own, not the deny-list: any entry missing from the filter
    fails one), each family of masked /proc files, a uid per slot and the same view in every slot, process limits
    and a neighbour's, fork bombs and daemons, memory for all processes and pipes, verdicts a program cannot forge
    (SIGXCPU sent to itself included), CPU, wall-clock and output limits, a spinning neighbour, zombies, signals
    to the host, and keys, SysV objects or POSIX message queues carried between runs. A probe that
    breaks counts as failed; raises SandboxUnavailable where no sandbox can start.
    """
    probes: list[Probe] = []
    for probe in PROBES:
        try:
            probes += probe(bwrap)
        except SandboxUnavailable:
            raise
        except Exception as error:  # noqa: BLE001 - a probe that breaks is a failed probe, never a crashed suite
            probes.append(Probe((probe.__doc__ or probe.__name__).splitlines()[0], False, f"the probe raised {error!r}"))
    return probes
