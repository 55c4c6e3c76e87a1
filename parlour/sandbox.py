"""Run untrusted Python: bubblewrap namespaces, a private filesystem, resource limits and a wall clock.

    from parlour.sandbox import run_python

    result = run_python("print(sum(map(int, input().split())))", stdin="2 3")
    result.verdict, result.stdout               # ("ok", "5\\n")

``run_python`` starts a fresh sandbox per program. :class:`Sandbox` keeps one warm (a fork server inside) for
fast scratch runs. ``parlour doctor sandbox`` runs :func:`run_probes`, the containment checks, on this machine.

Containment (the bubblewrap backend, the default):

* Namespaces: new user, PID, network, IPC, UTS, mount and, where the kernel has them, cgroup namespaces. The
  network namespace has only its own loopback interface, so nothing outside it is reachable, not even the host's
  127.0.0.1 or its abstract UNIX sockets (and the filter below refuses every socket family but ``AF_UNIX``).
  In the PID namespace no host process is visible, so the program cannot signal its caller. The IPC namespace
  holds no SysV object of the host's (and the filter below lets the program make none).
* Filesystem: a fresh root holding, read-only, ``/usr`` with the host's ``/bin``, ``/sbin``, ``/lib*`` links
  or folders, ``/etc/ld.so.cache`` and ``/etc/localtime`` (nothing else of ``/etc``), and the interpreter's
  prefix (``sys.base_prefix``); a ``/proc`` of the new PID namespace and a minimal, read-only ``/dev``. The
  only writable places are two private tmpfs of at most ``Limits.scratch_mb`` each: ``/tmp``, the program's
  working directory and ``HOME``, and ``/dev/shm``, for ``multiprocessing``'s semaphores. They disappear
  with the sandbox, and a warm sandbox empties them after each run.
* Environment: bubblewrap itself starts with an empty environment (so even ``/proc/1/environ`` holds nothing
  of the host's) and the program gets only ``PATH``, ``HOME``, ``TMPDIR``, ``LANG``, ``USER`` and
  ``PYTHONHASHSEED=0``. The interpreter runs with ``-s -P -S -X utf8``: no user or site packages and no
  script folder on ``sys.path`` (the program sees the standard library only, and start-up skips the host's
  ``.pth`` files), UTF-8 everywhere. It reads ``PYTHON*`` variables (``-I`` would ignore them), but the
  environment is entirely parlour's, and the fixed hash seed makes ``str`` hashes, hence the order of sets
  of strings, the same in every sandbox: a program's output, and a verdict on it, replay.
* One budget per sandbox, a cgroup of its own (``parlour-sandbox/slot-N``): on cgroup v1 (this repository's CI)
  under the caller's own memory and cpu cgroups, on v2 at the top of the hierarchy with the memory and cpu
  controllers delegated to it (:func:`_cgroup_parents`). bubblewrap starts inside it (a shell moves itself in,
  then becomes bubblewrap), so every process of the sandbox does, and the cgroup namespace bubblewrap makes is
  rooted there: ``/proc/self/cgroup`` reads ``/`` in every slot. Its memory limit
  (``memory.limit_in_bytes`` and ``memory.memsw.limit_in_bytes`` on v1, ``memory.max`` and ``memory.swap.max``
  0 on v2) is ``memory_mb`` for all its processes together, and counts all that the kernel charges: pages,
  the scratch tmpfs' files, pipe and socket buffers. Its CPU weight is one share whatever its number of
  processes or sessions, so a neighbour spinning in 32 sessions cannot starve a run into a timeout. Where no
  writable memory cgroup is to be had, ``memory_mb`` falls back to ``RLIMIT_AS`` per process (and no run is
  judged ``memory``: a ``MemoryError`` is only the program's word).
* Limits set in the program's own process just before it runs: ``RLIMIT_CPU`` (SIGXCPU at ``cpu_seconds``,
  rounded up to whole seconds, SIGKILL a second later), ``RLIMIT_FSIZE``, ``RLIMIT_NPROC`` (per uid, hence per
  slot: see below), ``RLIMIT_NOFILE`` and no core files. The server in the sandbox kills the program at
  ``wall_seconds`` and then every process left in the sandbox (``setsid()`` daemons included); the host reads
  at most ``max_output_bytes`` of output (never more into memory) and stops the run past that.
  ``--die-with-parent`` ends the sandbox with the thread that started it (the launcher's, which lasts as long
  as the process, for a sandbox started ahead: see below); ``--new-session`` keeps it off the caller's terminal.
* A seccomp filter (:data:`DENIED_SYSCALLS`, compiled to BPF with libseccomp and handed to bubblewrap's
  ``--seccomp``; it binds the server too and sets ``no_new_privs``) answers EPERM to the kernel interfaces an
  unprivileged process still has that reach past the namespaces or keep state after the program: new
  namespaces (``unshare``, ``clone`` with namespace flags; ``clone3``, whose flags it cannot read, answers
  ENOSYS and the C library falls back to ``clone``) and ``setns``, ``io_uring``, keyrings, SysV IPC,
  ``ptrace`` and other processes' memory or descriptors, mounts old and new, ``bpf``, ``perf_event_open``,
  ``userfaultfd``, kexec, kernel modules, the clock, ``personality``, POSIX message queues (``mq_open``...),
  the ``TIOCSTI``/``TIOCLINUX`` ioctls (:data:`DENIED_IOCTLS`), and ``socket``/``socketpair`` of any family but
  ``AF_UNIX`` (:data:`ALLOWED_SOCKET_FAMILIES`: ``AF_VSOCK`` is not network-namespaced, and no task has its
  network on, so ``AF_INET*`` is refused too). ``parlour doctor sandbox`` tries an attack list of its own
  against the filter and tells the filter's EPERM from the kernel's, so a filter missing any entry fails it.
* /proc shows nothing of the host where bubblewrap can hide it: the files of :data:`MASKED_PROC` (kernel
  symbols, every user's keys, timers, interrupts, memory and device tables, locks, SysV tables, pressure stall
  figures, ``sys/fs/file-nr`` and ``inode-nr``, the boot id, the kernel's command line) are an empty read-only
  file, and ``meminfo``, ``stat``, ``loadavg``, ``uptime`` and ``cpuinfo`` show the sandbox's own figures (its
  memory budget, its CPUs and no model, no load): :func:`_proc_figures`.
* Verdicts come from the host. The server reports each run over a ``SOCK_SEQPACKET`` socket the program cannot
  reach (its process keeps no descriptor but stdin, stdout and stderr; it runs as another uid; ``ptrace`` and
  ``pidfd_getfd`` are denied), and the host reads ``memory`` from the kernel's count of OOM kills in the
  sandbox's cgroup, ``output_limit`` from what it read itself, and ``timeout`` from the server's clocks: the
  wall clock, or the program's CPU time on the kernel clock ``RLIMIT_CPU`` is held against, read before it is
  reaped. Nothing the program prints, raises, exits with or signals to itself (``SIGXCPU`` included) chooses a
  verdict other than its own ``ok`` or ``error`` (a ``MemoryError`` is an ``error``).
* Known leaks: ``sysinfo(2)`` is not namespaced, so ``os.getloadavg()`` and ``os.sysconf("SC_PHYS_PAGES")`` (and
  its kin) show the host's load, memory and process count. Seccomp cannot rewrite its answer to the sandbox's
  figures, and denying it breaks the C library's ``sysconf``, which ignores the failure (tried: glibc 2.36
  then says ``SC_PHYS_PAGES`` is 0 and ``SC_AVPHYS_PAGES`` is uninitialised memory).
  ``CLOCK_BOOTTIME`` shows the host's uptime (there is no time namespace), and ``/proc/self/mountinfo`` names
  the host paths of the bound folders.
* The same in every slot: a program sees the same uid and gid (:data:`SANDBOX_UID` as root; the caller's
  otherwise), hostname, folders, environment, process ids (a fresh sandbox's program is PID 3) and cgroup
  (``/``), whichever slot it lands in, so its output replays in another. What still differs from one sandbox to
  the next, and no program should print if it is to replay: ``/proc/self/uid_map`` and ``gid_map`` (the slot's
  host uid), kernel-wide counters (mount ids in ``mountinfo``, device numbers in ``st_dev``, namespace ids in
  ``/proc/self/ns``), and the clocks.

Who runs the program, and why:

* As root (a container, like this repository's CI): bubblewrap runs as root and makes a user namespace whose
  maps the host writes while bubblewrap waits (``--userns-block-fd``): root to root, for bubblewrap and the
  server, and :data:`SANDBOX_UID` to the slot's own host uid. bubblewrap keeps only the capabilities the server
  needs (``CAP_SETUID``, ``CAP_SETGID``, ``CAP_KILL``, ``CAP_DAC_OVERRIDE``, ``CAP_FOWNER``), in that namespace
  only, and empties the bounding set of every other (``CAP_SYS_ADMIN`` included). Each sandbox holds one of
  :data:`SLOTS` slots (an ``flock`` on a file of this user's private state folder, freed when its holder dies),
  and each program's process drops to uid and gid :data:`SANDBOX_UID`, which is ``SANDBOX_UID_BASE + slot`` on
  the host (no supplementary groups, hence no capabilities), before any of its code runs. No account on the host
  has that uid, and no concurrent sandbox shares it, so nothing the kernel keeps per user (the process count
  ``RLIMIT_NPROC`` limits, keyrings, pipe and inotify quotas) is shared between sandboxes or with the host:
  one sandbox holding its whole process limit leaves another's forks alone; yet every slot's program sees the
  same uid. The server stays root, so the program can neither signal nor trace it. Dropping privileges *before*
  exec'ing bubblewrap was tried: it works in this container (unprivileged user namespaces are enabled,
  bubblewrap unprivileged makes its own), but bubblewrap then resolves every bind source as that user, and an
  interpreter under ``/root`` (mode 0700; pyenv here) cannot be bound, not even with ``--ro-bind-fd``, whose
  ``/proc/self/fd`` path bubblewrap resolves with ``realpath()`` too. So the drop happens inside the sandbox, in
  the forked child.
* As any other user: bubblewrap makes a user namespace (this needs unprivileged user namespaces:
  ``kernel.unprivileged_userns_clone=1`` where that sysctl exists, ``user.max_user_namespaces`` > 0) and,
  with bubblewrap 0.8 or later, forbids nested ones. The program runs as the calling user mapped into it,
  without capabilities; per-user counts are kept per user namespace, so each sandbox has its own. The
  cgroup budget needs a cgroup this user may write (a systemd user slice with delegation, for instance).

Warm sandboxes: :class:`Sandbox` starts one sandbox and, per program, forks its server: no bubblewrap or
interpreter start-up, so scratch runs (an agent trying code) are fast. Between runs the server kills every
leftover process and empties the scratch folders, but runs still share the sandbox, and with it two counters
no unprivileged server can reset: the PID namespace numbers processes on from the last run (the program of
the third run is PID 5, and a program that forked k times moves the next one's PID by k), and the scratch
tmpfs numbers inodes on. A later program can read from them how many processes and files earlier ones made:
a channel between the runs of one warm sandbox. Resetting the PID counter needs ``CAP_SYS_ADMIN`` or
``CAP_CHECKPOINT_RESTORE`` inside the namespace (``ns_last_pid``, ``clone3``'s ``set_tid``) and the inode
counter a new tmpfs mount, privileges the server must not hold; a new PID namespace per run is a fresh
sandbox. So a warm sandbox belongs to one tenant and one player: give each player of a multi-player game
(both of CoderTester) and each tenant of a server its own :class:`Sandbox`, never a shared one. As a
non-root user the program also runs as the same user as the server and could kill it. Verdicts that count
(judging a submission) therefore use a fresh sandbox, where every program starts from the same state (it is
PID 3, in empty folders): :func:`run_python` always starts one, and its results match a warm run's.

Sandboxes started ahead (a fresh sandbox's start-up, off the caller's clock): each contained start asks a
launcher thread (:class:`_Launcher`) for the next sandbox with the same bubblewrap and limits, which it starts
at once up to bubblewrap's ``--block-fd``. By then bubblewrap has started in its slot's cgroup (on cgroup v1
that write to ``cgroup.procs`` can wait for an RCU grace period: up to 25 ms, one start in three, on this
repository's CI), the host has written its user namespace's maps, and bubblewrap has made the namespaces, the
mounts and the empty scratch tmpfs, but the seccomp filter is not loaded yet and neither the server nor any
program has run. The next :class:`Sandbox` (:func:`run_python`'s included) takes this spare and lets it go on, so
its start pays for the server's interpreter only. A run in it is as fresh as one started on the spot (PID 3, the
first inode of a new tmpfs, a slot's uid and cgroup of its own). A sandbox is started on the spot where no spare
for its limits is ready (one start at a time waits for the spare being started) or the spare died. The cost: once
a process has started a sandbox, one spare (bubblewrap and its child, blocked, and a slot) waits in it until it
exits, and a change of limits throws the spare away; a forked child leaves its parent's spare alone and starts its
own.
:data:`START_AHEAD` set to False turns this off.

Without bubblewrap, or where it cannot start (no user namespaces, a seccomp policy that forbids them),
:class:`SandboxUnavailable` says how to install it. ``allow_unsafe=True`` then runs the same server as a plain
subprocess with the same limits and none of the isolation (the host's files, network and environment; as
root, ``RLIMIT_NPROC`` does not bind), for development only; :attr:`RunResult.sandboxed` says which ran.

Requirements: Linux 5.3 or later (pidfd), bubblewrap, libseccomp with the ``pyseccomp`` package (for the
filter), user namespaces (as root too: ``user.max_user_namespaces`` > 0), and for one budget per sandbox a
writable memory cgroup (v1, or v2 with the memory controller). Tested with bubblewrap 0.8 (Debian 12) as root and
as nobody, and as root on Ubuntu 24.04 with Python 3.12; from 0.8 on, the tmpfs size limits and
``--disable-userns`` are used. The user namespace as root, which came later, was tested with bubblewrap 0.8
as root on Linux 6.18.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import json
import marshal
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import weakref
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Verdict = Literal["ok", "error", "timeout", "memory", "output_limit"]

#: The bubblewrap executable: a name looked up on PATH, or a path.
BWRAP = "bwrap"
#: Seconds a sandbox may take to start, and past ``wall_seconds`` for the server to report a run.
START_TIMEOUT = 10.0
REPORT_GRACE = 5.0
#: Root's capabilities bubblewrap keeps, when run as root, for the server (and each program until it drops them).
ROOT_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_DAC_OVERRIDE", "CAP_FOWNER")
SANDBOX_TMP = "/tmp"
#: Where multiprocessing keeps its semaphores: a second scratch tmpfs.
SANDBOX_SHM = "/dev/shm"
ENVIRONMENT = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "USER": "sandbox", "PYTHONHASHSEED": "0"}
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), "
    "or pass allow_unsafe=True to run without a sandbox, for development only"
)

#: Programs of sandbox slot ``n`` run as uid and gid ``SANDBOX_UID_BASE + n`` on the host (when parlour runs as
#: root): a uid no account on the host uses, so that nothing the kernel keeps per user (the process count
#: RLIMIT_NPROC limits, pipe buffers, inotify watches) is shared between sandboxes or with the host.
SANDBOX_UID_BASE = 1_600_000_000
#: The uid and gid those programs see: each sandbox's user namespace maps its slot's host uid (and gid) to this one,
#: so a program prints the same ``os.getuid()`` in every slot and its output replays in any of them.
SANDBOX_UID = 1000
#: How many sandboxes may run at once on one machine (all parlour processes together).
SLOTS = 4096
#: Processes of a sandbox's cgroup that are not the program's: bubblewrap, the namespace's init and the server.
OVERHEAD_PROCESSES = 3
#: Whether contained sandboxes are started ahead by the launcher thread (see the module's notes); False starts
#: each on the spot, in the caller's thread, and asks for no spare.
START_AHEAD = True

#: System calls the seccomp filter refuses (EPERM, ENOSYS for clone3), and why. Everything else is allowed:
#: the program is already unprivileged in its namespaces, the filter closes the kernel interfaces that stay
#: open to an unprivileged process and either reach past the namespaces or keep state between runs.
DENIED_SYSCALLS = {
    # New namespaces (a user namespace gives full capabilities inside it) and joining others.
    "unshare": "new namespaces", "setns": "joining namespaces",
    # Keyrings are per uid and outlive the sandbox.
    "add_key": "keyrings", "keyctl": "keyrings", "request_key": "keyrings",
    # io_uring: a second system-call interface that seccomp cannot see into.
    "io_uring_setup": "io_uring", "io_uring_enter": "io_uring", "io_uring_register": "io_uring",
    # SysV IPC objects outlive the program that made them (a warm sandbox keeps its IPC namespace).
    "msgget": "SysV IPC", "msgsnd": "SysV IPC", "msgrcv": "SysV IPC", "msgctl": "SysV IPC",
    "semget": "SysV IPC", "semop": "SysV IPC", "semtimedop": "SysV IPC", "semctl": "SysV IPC",
    "shmget": "SysV IPC", "shmat": "SysV IPC", "shmdt": "SysV IPC", "shmctl": "SysV IPC",
    # Reaching into other processes (the server, the next run).
    "ptrace": "tracing", "process_vm_readv": "other processes' memory", "process_vm_writev": "other processes' memory",
    "pidfd_getfd": "stealing file descriptors", "kcmp": "comparing kernel objects",
    # Mounts, old and new API.
    "mount": "mounts", "umount2": "mounts", "pivot_root": "mounts", "chroot": "mounts", "fsopen": "mounts",
    "fsconfig": "mounts", "fsmount": "mounts", "fspick": "mounts", "move_mount": "mounts", "open_tree": "mounts",
    "mount_setattr": "mounts",
    # Kernel attack surface an unprivileged program has no use for.
    "bpf": "eBPF", "perf_event_open": "performance counters", "userfaultfd": "userfaultfd (exploit aid)",
    "kexec_load": "kexec", "kexec_file_load": "kexec", "init_module": "kernel modules",
    "finit_module": "kernel modules", "delete_module": "kernel modules", "open_by_handle_at": "file handles",
    "name_to_handle_at": "file handles", "acct": "accounting", "quotactl": "quotas", "swapon": "swap",
    "swapoff": "swap", "reboot": "reboot", "syslog": "the kernel log", "settimeofday": "the clock",
    "clock_settime": "the clock", "clock_adjtime": "the clock", "adjtimex": "the clock",
    "lookup_dcookie": "profiling", "fanotify_init": "filesystem-wide notification", "iopl": "I/O ports",
    "ioperm": "I/O ports", "personality": "execution domains (ASLR off)", "vhangup": "terminals",
    "uselib": "obsolete", "sysfs": "obsolete", "nfsservctl": "obsolete",
    # POSIX message queues outlive the program that made them, as SysV IPC does.
    "mq_open": "POSIX message queues", "mq_unlink": "POSIX message queues", "mq_timedsend": "POSIX message queues",
    "mq_timedreceive": "POSIX message queues", "mq_notify": "POSIX message queues",
    "mq_getsetattr": "POSIX message queues",
}
# clone's flags that make new namespaces; clone3 passes its flags in memory the filter cannot read, so clone3
# answers ENOSYS and the C library falls back to clone.
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080
# ioctls that push input into a terminal (TIOCSTI) or reach the console (TIOCLINUX).
DENIED_IOCTLS = (0x5412, 0x541C)
#: The socket families ``socket`` and ``socketpair`` may make; every other answers EPERM. The network namespace
#: holds only loopback, but some families are not namespaced at all (``AF_VSOCK`` reaches the host or its
#: hypervisor), and no task has its network on: AF_INET and AF_INET6 are refused too.
ALLOWED_SOCKET_FAMILIES = (socket.AF_UNIX,)
# Families below this number are refused one by one, every number from it up at once (Linux knows 46).
SOCKET_FAMILY_LIMIT = 64

#: /proc files that show the host (its memory, load, CPU times, kernel symbols, timers, every user's keys) and are
#: replaced, in the sandbox, by an empty file or a figure of the sandbox's own.
MASKED_PROC = ("kallsyms", "keys", "key-users", "timer_list", "sched_debug", "interrupts", "softirqs", "vmstat",
               "zoneinfo", "buddyinfo", "pagetypeinfo", "slabinfo", "diskstats", "partitions", "swaps", "modules",
               "iomem", "ioports", "latency_stats", "locks", "cgroups", "sysvipc/msg", "sysvipc/sem", "sysvipc/shm",
               "pressure/cpu", "pressure/memory", "pressure/io", "pressure/irq", "sys/fs/file-nr", "sys/fs/inode-nr",
               "sys/kernel/random/boot_id", "cmdline")


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run; the defaults suit a judge of short programs.

    The CPU limit counts whole seconds (rounded up), per process. ``memory_mb`` is the sandbox's cgroup budget,
    for all its processes, tmpfs files and pipe buffers together (address space per process where no cgroup
    can be had); ``max_processes`` counts the processes of the sandbox's uid, hence of the sandbox.
    ``scratch_mb`` bounds each of the ``/tmp`` and ``/dev/shm`` tmpfs, which are made when a sandbox starts:
    a warm :class:`Sandbox` takes it from the limits it was created with (bubblewrap 0.8 or later).
    """

    cpu_seconds: float = 5.0
    wall_seconds: float = 10.0
    memory_mb: int = 512
    max_output_bytes: int = 1 << 20
    max_processes: int = 64
    max_open_files: int = 64
    max_file_mb: int = 16
    scratch_mb: int = 64


@dataclass(frozen=True)
class RunResult:
    """What a program did.

    ``verdict``: ``ok`` (exit status 0), ``error`` (any other exit or signal), ``timeout`` (CPU or wall-clock
    limit), ``memory`` (the kernel killed a process of the sandbox for want of memory: its cgroup's count of OOM
    kills rose during the run; never from anything the program says, so without a cgroup a ``MemoryError`` at
    the address-space limit is an ``error``), ``output_limit``
    (more than ``max_output_bytes`` of stdout and stderr together; ``truncated`` is then set and both hold
    what came before the cut). ``exit_code`` is None when a signal (``signal``) ended it. ``cpu_seconds``
    is the user and system time of the program and the children it waited for; ``wall_seconds`` runs from
    its fork to its end. ``sandboxed`` is False for ``allow_unsafe`` runs without bubblewrap.
    """

    stdout: str
    stderr: str
    exit_code: int | None
    signal: int | None
    cpu_seconds: float
    wall_seconds: float
    verdict: Verdict
    truncated: bool = False
    sandboxed: bool = True


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot make a sandbox here; the message says how to fix it."""


@functools.cache
def _bwrap_version(path: str) -> tuple[int, ...]:
    """bubblewrap's version, (0,) where it does not say."""
    try:
        words = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=5).stdout.split()
        return tuple(int(part) for part in words[-1].split("."))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return (0,)


def _interpreter() -> str:
    """The base interpreter (not a virtualenv's link to it): only its prefix is bound into the sandbox."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


@functools.cache
def _server_code() -> bytes:
    """The fork server, compiled once here and marshalled: the sandbox runs this same interpreter, and
    compiling the server's source at every start would cost a cold run about 5 ms."""
    source = Path(__file__).with_name("sandbox_server.py").read_text(encoding="utf-8")
    return marshal.dumps(compile(source, "<string>", "exec"))


# Runs the marshalled server read from the file descriptor in argv[1]; the server reads the rest of argv.
BOOTSTRAP = (
    "import marshal, os, sys\n"
    "fd = int(sys.argv.pop(1))\n"
    "server = marshal.loads(os.read(fd, 1 << 24))\n"
    "os.close(fd)\n"
    "exec(server)\n"
)


@functools.cache
def _system_binds() -> tuple[str, ...]:
    """bubblewrap arguments for the read-only system folders the interpreter needs (looked up once per process,
    not at every cold start)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    for name in ("/etc/ld.so.cache", "/etc/localtime"):
        args += ["--ro-bind-try", name, name]
    bound = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]
    interpreter = _interpreter()
    for prefix in dict.fromkeys(
        os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix, os.path.dirname(interpreter))
    ):
        if not any(prefix == b or prefix.startswith(b + "/") for b in bound):
            # bubblewrap would make the folders above the prefix as the host has them, /root with mode 0700,
            # which the sandbox's uid cannot cross; --dir makes them 0755.
            for parent in reversed(Path(prefix).parents[:-1]):
                args += ["--dir", str(parent)]
            args += ["--ro-bind", prefix, prefix]
            bound.append(prefix)
    return tuple(args)


def _bwrap_command(bwrap: str, fds: dict[str, int], limits: Limits, uid: int | None) -> list[str]:
    """The bubblewrap command line that starts a contained server.

    ``fds``: ``server`` (its socket), ``code`` (its code), ``seccomp`` (the filter), ``info`` (where bubblewrap
    writes its child's pid), ``block`` (bubblewrap waits for a byte on it before it starts the server), as root
    ``userns`` (bubblewrap waits for a byte on it while the host writes the user namespace's maps), and
    ``proc/NAME`` for each file of :func:`_proc_figures`. Programs run as ``uid`` (None: the caller's).
    """
    version = _bwrap_version(bwrap)
    args = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    args += ["--seccomp", str(fds["seccomp"]), "--info-fd", str(fds["info"]), "--block-fd", str(fds["block"])]
    if os.geteuid() == 0:
        # A user namespace whose maps the host writes (_write_maps): root stays root, for bubblewrap and the server,
        # and the slot's uid is SANDBOX_UID inside; the capabilities kept are the namespace's, and bubblewrap empties
        # the bounding set of all others.
        args += ["--unshare-user", "--userns-block-fd", str(fds["userns"]), "--cap-drop", "ALL"]
        for capability in ROOT_CAPABILITIES:
            args += ["--cap-add", capability]
    else:
        args += ["--unshare-user"] + (["--disable-userns"] if version >= (0, 8) else [])
    args += ["--die-with-parent", "--new-session", "--hostname", "sandbox", "--clearenv"]
    for name, value in {**ENVIRONMENT, "HOME": SANDBOX_TMP, "TMPDIR": SANDBOX_TMP}.items():
        args += ["--setenv", name, value]
    args += _system_binds()
    size = ["--size", str(limits.scratch_mb << 20)] if version >= (0, 8) else []
    args += ["--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", SANDBOX_SHM, *size, "--tmpfs", SANDBOX_TMP]
    # /dev/null would not do: /proc is mounted nodev, where no device opens.
    for name in _masked_proc_files():
        args += ["--ro-bind", str(_state_folder() / "empty"), f"/proc/{name}"]
    for key, fd in fds.items():
        if key.startswith("proc/"):
            args += ["--perms", "0444", "--ro-bind-data", str(fd), "/" + key]
    # The root and /dev are tmpfs too, writable (and unbounded) as a non-root user's: only the scratch folders
    # stay writable. Device nodes still work on a read-only /dev.
    args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", SANDBOX_TMP]
    return args + _server_command(fds["server"], fds["code"], "contained", uid, SANDBOX_TMP, SANDBOX_SHM)


def _server_command(fd: int, code_fd: int, mode: str, uid: int | None, workdir: str, *scratch: str) -> list[str]:
    """The fork server's command line, its code in ``code_fd``, its socket ``fd``: programs run as ``uid`` (None:
    the server's) in ``workdir``; it and ``scratch`` are emptied after each."""
    return [_interpreter(), "-s", "-P", "-S", "-X", "utf8", "-c", BOOTSTRAP, str(code_fd), str(fd), mode,
            "-" if uid is None else str(uid), workdir, *scratch]


def _find_bwrap(bwrap: str) -> str | None:
    """The absolute path of ``bwrap`` if it is an executable file, else None."""
    found = shutil.which(bwrap)
    return os.path.abspath(found) if found else None


def _memfd(name: str, data: bytes) -> int:
    """An anonymous in-memory file holding ``data``, positioned at its start."""
    fd = os.memfd_create(name)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@functools.cache
def _seccomp_program() -> tuple[bytes, tuple[str, ...]]:
    """The seccomp filter as BPF for bubblewrap's ``--seccomp``, and the denied calls libseccomp does not know.

    Raises SandboxUnavailable, saying what to install, where pyseccomp or libseccomp is missing.
    """
    try:
        import pyseccomp as seccomp
        rules = seccomp.SyscallFilter(seccomp.ALLOW)
    except (ImportError, OSError, RuntimeError) as error:
        raise SandboxUnavailable(
            f"the sandbox's seccomp filter needs libseccomp and pyseccomp ({error}): apt-get install libseccomp2 "
            f"and pip install pyseccomp, or {INSTALL_HINT.split(', or ')[-1]}"
        ) from error
    unknown = []
    for name in DENIED_SYSCALLS:
        try:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except OSError:
            unknown.append(name)
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for name in ("socket", "socketpair"):
        for family in range(SOCKET_FAMILY_LIMIT):
            if family not in ALLOWED_SOCKET_FAMILIES:
                rules.add_rule(seccomp.ERRNO(errno.EPERM), name, seccomp.Arg(0, seccomp.EQ, family))
        # Compared on all 64 bits: a family with high bits set (which the kernel would drop) is refused too.
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name, seccomp.Arg(0, seccomp.GE, SOCKET_FAMILY_LIMIT))
    for flag in range(32):
        if CLONE_NAMESPACES >> flag & 1:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, 1 << flag, 1 << flag))
    for request in DENIED_IOCTLS:
        # The request is an int: compare its low 32 bits only.
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
    with tempfile.TemporaryFile() as compiled:
        rules.export_bpf(compiled)
        compiled.seek(0)
        return compiled.read(), tuple(unknown)


def _proc_figures(limits: Limits) -> dict[str, bytes]:
    """Contents of the /proc files that show the sandbox's own figures instead of the host's."""
    cpus = len(os.sched_getaffinity(0))
    kilobytes = limits.memory_mb << 10
    meminfo = "".join(f"{name}:{kilobytes:>16} kB\n" for name in ("MemTotal", "MemFree", "MemAvailable"))
    meminfo += "".join(f"{name}:{0:>16} kB\n" for name in ("Buffers", "Cached", "SwapTotal", "SwapFree"))
    # glibc counts the cpuN lines of /proc/stat for os.cpu_count() where /sys is absent, as it is here.
    stat = "".join(f"cpu{n} 0 0 0 0 0 0 0 0 0 0\n" for n in [""] + list(range(cpus)))
    stat += "intr 0\nctxt 0\nbtime 0\nprocesses 0\nprocs_running 1\nprocs_blocked 0\n"
    # The processors the sandbox may use, for a program that counts them here, and nothing of the host's model.
    cpuinfo = "".join(f"processor\t: {n}\n\n" for n in range(cpus))
    return {"meminfo": meminfo.encode(), "stat": stat.encode(), "loadavg": b"0.00 0.00 0.00 1/1 1\n",
            "uptime": b"0.00 0.00\n", "cpuinfo": cpuinfo.encode()}


@functools.cache
def _masked_proc_files() -> tuple[str, ...]:
    """The files of :data:`MASKED_PROC` this kernel has (bubblewrap cannot bind over a missing one)."""
    return tuple(name for name in MASKED_PROC if os.path.exists(f"/proc/{name}"))


@functools.cache
def _state_folder() -> Path:
    """This user's private folder of slot locks, and of the empty file that hides host files in /proc."""
    folder = Path(tempfile.gettempdir()) / f"parlour-sandbox-{os.geteuid()}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        status = folder.lstat()
        if not folder.is_dir() or folder.is_symlink() or status.st_uid != os.geteuid() or status.st_mode & 0o022:
            raise SandboxUnavailable(f"{folder} is not a private folder of this user: remove it") from None
    empty = folder / "empty"
    empty.touch(mode=0o444)
    return folder


class _Slot:
    """One of :data:`SLOTS` sandbox slots, held (an exclusive ``flock``) by one sandbox of this machine at a time.

    The lock dies with the process that holds it, so a crashed parlour frees its slots.
    """

    def __init__(self) -> None:
        folder = _state_folder()
        for index in range(SLOTS):
            fd = os.open(folder / f"slot-{index}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.index, self._fd = index, fd
            return
        raise SandboxUnavailable(f"all {SLOTS} sandbox slots of this machine are in use: close some sandboxes")

    @property
    def uid(self) -> int:
        """The uid and gid this slot's programs run as, when parlour runs as root."""
        return SANDBOX_UID_BASE + self.index

    def release(self) -> None:
        """Give the slot back."""
        os.close(self._fd)


def _cgroup_mounts() -> list[tuple[str, str, str, set[str]]]:
    """(mount point, root inside the hierarchy, version, controllers) of every cgroup file system mounted here."""
    mounts = []
    with open("/proc/self/mountinfo", encoding="utf-8") as table:
        for line in table:
            left, _, right = line.partition(" - ")
            fields, (fstype, _source, options) = left.split(), right.split()[:3]
            if fstype == "cgroup2":
                mounts.append((fields[4], fields[3], "v2", set()))
            elif fstype == "cgroup":
                mounts.append((fields[4], fields[3], "v1", set(options.split(","))))
    return mounts


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under ``""`` its v2 path."""
    paths = {}
    with open("/proc/self/cgroup", encoding="utf-8") as table:
        for line in table:
            _id, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths


def _prepare_v2(point: str) -> dict[str, Path] | None:
    """A ``parlour-sandbox`` cgroup at the top of the v2 hierarchy at ``point``, its children given the memory (and
    CPU) controllers; None where that cannot be done (no memory controller, a hierarchy not ours to change)."""
    top = Path(point)
    available = (top / "cgroup.controllers").read_text().split()
    wanted = [name for name in ("memory", "cpu") if name in available]
    if "memory" not in wanted:
        return None
    parent = top / "parlour-sandbox"
    parent.mkdir(exist_ok=True)
    change = " ".join(f"+{name}" for name in wanted)
    for folder in (top, parent):
        if set(wanted) - set((folder / "cgroup.subtree_control").read_text().split()):
            (folder / "cgroup.subtree_control").write_text(change)
    return {name: parent for name in wanted}


@functools.cache
def _cgroup_parents() -> tuple[str, dict[str, Path]] | None:
    """Where sandboxes' cgroups go: the version and, per controller (memory, and cpu where it can), the folder
    to make them in; None where no writable memory cgroup is to be had (the budget is then per process)."""
    own = _own_cgroups()
    mounts = _cgroup_mounts()
    for point, _root, version, _controllers in mounts:
        if version == "v2" and own.get("") is not None:
            try:
                found = _prepare_v2(point)
            except OSError:
                continue
            if found:
                return "v2", found
    parents: dict[str, Path] = {}
    for point, root, version, controllers in mounts:
        for controller in ("memory", "cpu"):
            if version != "v1" or controller not in controllers or controller in parents or controller not in own:
                continue
            path = own[controller]
            inside = path[len(root):] if root != "/" and path.startswith(root) else path
            parent = Path(point + inside.rstrip("/")) / "parlour-sandbox"
            try:
                parent.mkdir(exist_ok=True)
            except OSError:
                continue
            if os.access(parent, os.W_OK):
                parents[controller] = parent
    return ("v1", parents) if "memory" in parents else None


class _Cgroup:
    """The cgroup of one sandbox slot: every process of the sandbox shares its memory budget (pages, tmpfs
    files, pipe and socket buffers: all that the kernel charges) and, with the cpu controller, one fair share of
    the CPUs whatever its number of processes. The host reads its OOM kills, which the program cannot forge."""

    def __init__(self, version: str, parents: dict[str, Path], slot: int) -> None:
        self.version = version
        self.folders = sorted({parent / f"slot-{slot}" for parent in parents.values()})
        for folder in self.folders:
            folder.mkdir(exist_ok=True)
        self.memory = parents["memory"] / f"slot-{slot}"
        self._memory_mb: int | None = None

    def adopt(self, pid: int) -> None:
        """Move process ``pid`` in; the processes it starts from then on are in too."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(pid))

    def limit_memory(self, memory_mb: int) -> None:
        """Cap the memory of all the sandbox's processes together at ``memory_mb``, swap included."""
        if memory_mb == self._memory_mb:
            return
        size = str(memory_mb << 20)
        if self.version == "v2":
            (self.memory / "memory.max").write_text(size)
            if (self.memory / "memory.swap.max").exists():
                (self.memory / "memory.swap.max").write_text("0")
        else:
            swap = self.memory / "memory.memsw.limit_in_bytes"
            # memory and swap together may never be set below memory alone: lift it, set memory, then match it.
            if swap.exists():
                swap.write_text("-1")
            (self.memory / "memory.limit_in_bytes").write_text(size)
            if swap.exists():
                swap.write_text(size)
        self._memory_mb = memory_mb

    def oom_kills(self) -> int:
        """How many processes the kernel has killed in this cgroup for want of memory, ever."""
        events = (self.memory / ("memory.events" if self.version == "v2" else "memory.oom_control")).read_text()
        for line in events.splitlines():
            name, _, count = line.partition(" ")
            if name == "oom_kill":
                return int(count)
        return 0



def _terminate(process: subprocess.Popen, sock: socket.socket, init: int | None, slot: _Slot | None,
               workdir: str) -> None:
    """End a sandbox and reap it; give back its slot and remove the unsandboxed server's folder ``workdir``.

    ``init`` is a pidfd of the sandbox's init (process 1 of its PID namespace): killing it ends every process in
    the namespace, and bubblewrap, its parent, reaps it and exits. Killing bubblewrap first would orphan init,
    and a host whose process 1 does not reap would keep it as a zombie. So would closing the server's socket
    first: the server exits on it, init reports that exit to bubblewrap, which exits without reaping init.
    """
    if init is not None:
        try:
            signal.pidfd_send_signal(init, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(init)
    sock.close()
    if init is not None:
        # Popen.wait(timeout) polls with sleeps that double from 0.5 ms, so it sees bubblewrap's exit late (a
        # millisecond of every cold run, measured): a pidfd of it (our child, not reaped yet, so the pid is still
        # its) wakes at the exit.
        try:
            exited = os.pidfd_open(process.pid)
        except ProcessLookupError:
            pass
        else:
            with selectors.DefaultSelector() as selector:
                selector.register(exited, selectors.EVENT_READ)
                selector.select(START_TIMEOUT)
            os.close(exited)
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
    if process.stderr is not None:
        process.stderr.close()
    if slot is not None:
        slot.release()
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)


# Moves the shell into each cgroup named before "--" (writing 0 to cgroup.procs moves the writer), then becomes
# the command after it: bubblewrap starts inside the slot's cgroup.
_INTO_CGROUP = 'while [ "$1" != -- ]; do echo 0 > "$1" || exit 1; shift; done; shift; exec "$@"'


def _write_maps(pid: int, host_uid: int) -> None:
    """Map the user namespace of ``pid`` (bubblewrap's child, waiting for it): root to root, for bubblewrap and the
    server, and :data:`SANDBOX_UID` to ``host_uid``, the slot's uid on the host, as uid and as gid."""
    mapping = f"0 0 1\n{SANDBOX_UID} {host_uid} 1\n".encode()
    for name in ("uid_map", "gid_map"):
        fd = os.open(f"/proc/{pid}/{name}", os.O_WRONLY)
        try:
            # The kernel takes a map in one write.
            os.write(fd, mapping)
        finally:
            os.close(fd)


def _read_info(fd: int, deadline: float) -> dict:
    """The JSON bubblewrap writes on its ``--info-fd`` (its child's pid), or {} if it ends without writing it."""
    data = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while not data.rstrip().endswith(b"}"):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                return {}
            chunk = os.read(fd, 4096)
            if not chunk:
                return {}
            data += chunk
    return json.loads(data)


def _start_key(bwrap: str, limits: Limits) -> tuple:
    """What a contained server's start depends on besides its slot: bubblewrap, and the limits that its command
    line holds (the scratch size, the memory and CPUs /proc shows)."""
    return bwrap, limits.scratch_mb, tuple(sorted(_proc_figures(limits).items()))


def _kill_group(process: subprocess.Popen) -> None:
    """SIGKILL bubblewrap's (or the unsandboxed server's) process group, if it is still there."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class _Server:
    """A started fork server: unsandboxed (``bwrap`` None) and running, or contained and held by bubblewrap.

    bubblewrap starts in the slot's cgroup, so that every process of the sandbox does; as root it waits
    (``--userns-block-fd``) while the host writes its user namespace's maps. Then it makes the namespaces, the
    mounts and the scratch tmpfs, and waits again (``--block-fd``) before it loads the seccomp filter and starts
    anything. Nothing of the sandbox has run until :meth:`release`. :meth:`close`, or collecting the object,
    kills it and gives its slot back.
    """

    def __init__(self, bwrap: str | None, limits: Limits) -> None:
        self.key = _start_key(bwrap, limits) if bwrap is not None else None
        seccomp = _seccomp_program()[0] if bwrap is not None else b""
        slot = _Slot()
        place = _cgroup_parents()
        try:
            cgroup = _Cgroup(*place, slot.index) if place else None
            if cgroup is not None:
                cgroup.limit_memory(limits.memory_mb)
        except OSError as error:
            slot.release()
            raise SandboxUnavailable(f"could not set up the sandbox's cgroup ({error})") from error
        # The programs' uid on the host (None: the caller's); inside they are SANDBOX_UID.
        uid = slot.uid if bwrap is not None and os.geteuid() == 0 else None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fds = {"server": theirs.fileno(), "code": _memfd("sandbox-server", _server_code())}
        info_read = block_write = userns_write = -1
        workdir = ""
        if bwrap is not None:
            info_read, fds["info"] = os.pipe()
            fds["block"], block_write = os.pipe()
            if uid is not None:
                fds["userns"], userns_write = os.pipe()
            fds["seccomp"] = _memfd("seccomp", seccomp)
            for name, figures in _proc_figures(limits).items():
                fds[f"proc/{name}"] = _memfd(name, figures)
            command = _bwrap_command(bwrap, fds, limits, None if uid is None else SANDBOX_UID)
            if cgroup is not None:
                # bubblewrap starts in the slot's cgroup, so that every process of the sandbox does, and so that the
                # cgroup namespace it makes is rooted there: /proc/self/cgroup reads "/" in every slot.
                procs = [str(folder / "cgroup.procs") for folder in cgroup.folders]
                command = ["/bin/sh", "-c", _INTO_CGROUP, "sh", *procs, "--", *command]
            environment: dict[str, str] = {}
        else:
            workdir = tempfile.mkdtemp(prefix="parlour-unsafe-")
            command = _server_command(fds["server"], fds["code"], "unsafe", None, workdir)
            environment = {**ENVIRONMENT, "HOME": workdir, "TMPDIR": workdir}
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=tuple(fds.values()),
                env=environment,
                cwd=workdir or "/",
                start_new_session=True,
            )
        except OSError as error:
            ours.close()
            slot.release()
            for fd in (info_read, block_write, userns_write):
                if fd >= 0:
                    os.close(fd)
            if bwrap is None:
                shutil.rmtree(workdir, ignore_errors=True)
                raise
            raise SandboxUnavailable(f"could not run {command[0]!r} ({error}): {INSTALL_HINT}") from error
        finally:
            theirs.close()
            for key, fd in fds.items():
                if key != "server":
                    os.close(fd)
        # A file, not a bare descriptor, so that it is closed exactly once however the server ends.
        self._block = open(block_write, "wb", buffering=0) if block_write >= 0 else None
        init = None
        try:
            if bwrap is not None:
                child = _read_info(info_read, time.monotonic() + START_TIMEOUT).get("child-pid")
                # Still blocked, so alive: the pidfd names it, never a later process that reuses its pid.
                init = os.pidfd_open(child) if child else None
                if init is None:
                    _kill_group(process)
                elif uid is not None:
                    _write_maps(child, uid)
                    os.write(userns_write, b"x")
            elif cgroup is not None:
                # The unsandboxed server forks nothing before its first request.
                cgroup.adopt(process.pid)
        except OSError:
            # bubblewrap died before its user namespace was mapped, or the mapping or the move failed: it ends here,
            # and the missing greeting says why.
            _kill_group(process)
        finally:
            for fd in (info_read, userns_write):
                if fd >= 0:
                    os.close(fd)
        self.process, self.sock, self.uid, self.cgroup, self.sandboxed = process, ours, uid, cgroup, bwrap is not None
        self._init = init
        self.finalizer = weakref.finalize(self, _terminate, process, ours, init, slot, workdir)

    def release(self) -> None:
        """Let bubblewrap go on and start the server (nothing to do for one that runs already, or is dead)."""
        if self._block is not None:
            try:
                self._block.write(b"go")
            except OSError:
                pass  # bubblewrap is gone: the missing greeting says why
            self._block.close()
            self._block = None

    def greeted(self) -> bool:
        """Whether the server said it is ready (within :data:`START_TIMEOUT`)."""
        with selectors.DefaultSelector() as ready:
            ready.register(self.sock, selectors.EVENT_READ)
            try:
                return bool(ready.select(START_TIMEOUT)) and self.sock.recv(64) == b"ready"
            except OSError:
                return False

    def fail(self) -> str:
        """Kill a server that did not greet, and return what bubblewrap said on its way out."""
        # After the release init has its own session, out of bubblewrap's group, and holds stderr open: kill it too.
        if self._init is not None:
            try:
                signal.pidfd_send_signal(self._init, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _kill_group(self.process)
        detail = self.process.stderr.read().decode(errors="replace").strip() if self.process.stderr else ""
        self.close()
        return detail

    def close(self) -> None:
        """Kill the server and everything in its sandbox, reap them, give the slot back."""
        self.finalizer()
        if self._block is not None:
            self._block.close()
            self._block = None


class _Launcher:
    """Starts the next contained server ahead, on a thread of its own, so that a sandbox's start does not wait
    for bubblewrap's namespaces and mounts, nor for the move into the cgroup.

    It keeps one spare, held at bubblewrap's ``--block-fd`` (see :class:`_Server`), for the bubblewrap and limits
    of the last sandbox started; :meth:`take` hands it out and asks for the next. The thread lives as long as the
    process, and ``--die-with-parent`` binds the spares to it: they die with the process.
    """

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._forget)

    def _reset(self) -> None:
        """No spare, no thread."""
        self._changed = threading.Condition()
        self._spare: _Server | None = None
        self._wanted: tuple[str, Limits] | None = None
        self._making: tuple | None = None
        self._awaited = False
        self._stale: list[_Server] = []
        self._thread: threading.Thread | None = None

    def _forget(self) -> None:
        """In a forked child: the spare and the thread are the parent's, so leave them alone and start afresh."""
        for server in [self._spare, *self._stale]:
            if server is not None:
                server.finalizer.detach()
        self._reset()

    def take(self, bwrap: str, limits: Limits) -> _Server | None:
        """The spare started for ``bwrap`` and ``limits`` (waiting for it if it is being started and no other start
        waits for it), or None; either way the next spare is started for them."""
        key = _start_key(bwrap, limits)
        with self._changed:
            # One start waits for the spare being started, which is further along than a start from scratch; any
            # other start at the same time goes ahead on its own: side by side, starts overlap their waits.
            if self._making == key and not self._awaited:
                self._awaited = True
                self._changed.wait_for(lambda: self._making != key, START_TIMEOUT)
                self._awaited = False
            spare, self._spare = self._spare, None
            if spare is not None and spare.key != key:
                self._stale.append(spare)
                spare = None
            self._wanted = (bwrap, limits)
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="parlour-sandbox-launcher", daemon=True)
                self._thread.start()
            self._changed.notify_all()
        return spare

    def _serve(self) -> None:
        """The thread: close spares no longer wanted, and start one whenever there is none."""
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._stale or (self._wanted is not None and self._spare is None))
                stale, self._stale = self._stale, []
                wanted = self._wanted if self._spare is None else None
                self._making = _start_key(*wanted) if wanted is not None else None
            for server in stale:
                server.close()
            if wanted is None:
                continue
            try:
                made: _Server | None = _Server(*wanted)
            # The thread must outlive a failed start: the start on the spot that follows meets the same failure and
            # reports it to its caller.
            except Exception:  # noqa: BLE001
                made = None
            with self._changed:
                if made is None:
                    # Not again until the next start asks (on the spot, where the error reaches the caller).
                    if self._wanted is wanted:
                        self._wanted = None
                elif self._spare is None and self._wanted is not None and _start_key(*self._wanted) == made.key:
                    self._spare = made
                else:
                    self._stale.append(made)
                self._making = None
                self._changed.notify_all()


_LAUNCHER = _Launcher()


class Sandbox:
    """A warm sandbox: one bubblewrap sandbox with a fork server inside, reused for every :meth:`run`.

    Runs are fast (a fork, no bubblewrap or interpreter start-up) and give the same results as
    :func:`run_python`, which is what judging should use (see the module's notes on warm sandboxes). One run
    at a time per sandbox (calls from several threads wait their turn). The sandbox restarts by itself if it
    died, for instance with the thread that started it (the caller's, where no spare was ready: see the
    module's notes on sandboxes started ahead). Use it as a context manager, or call :meth:`close`.

    Its runs share PID numbering and tmpfs inode numbers, from which a program learns how many processes and
    files the runs before it made: give each tenant, and each player of a game, a sandbox of its own.

    ``bwrap`` is the bubblewrap executable (default :data:`BWRAP`); ``allow_unsafe=True`` falls back to an
    unsandboxed subprocess, with a warning, where bubblewrap is missing or cannot start.
    """

    def __init__(self, limits: Limits | None = None, *, allow_unsafe: bool = False, bwrap: str | None = None) -> None:
        self.limits = limits or Limits()
        self.allow_unsafe = allow_unsafe
        self.bwrap = bwrap or BWRAP
        self.sandboxed = True
        #: The uid its programs run as on the host (None: the caller's; inside they are SANDBOX_UID as root) and
        #: its cgroup (None where no writable memory cgroup is to be had: the memory limit is then per process).
        self.uid: int | None = None
        self._cgroup: _Cgroup | None = None
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._server: _Server | None = None
        self._start()

    def _start(self) -> None:
        """Start the sandbox (or, if allowed, the unsandboxed server) and wait for its server to be ready."""
        try:
            self._launch(contained=True)
        except SandboxUnavailable as error:
            if not self.allow_unsafe:
                raise
            warnings.warn(f"{error}; running WITHOUT a sandbox (allow_unsafe=True)", RuntimeWarning, stacklevel=3)
            self._launch(contained=False)

    def _launch(self, contained: bool) -> None:
        """Start the server, contained by bubblewrap or not, and wait until it is ready; raises SandboxUnavailable if
        bubblewrap fails.

        A contained start takes the launcher's spare where it was started for these limits (see :class:`_Launcher`);
        a spare that died while it waited gives way to a start here, whose failure is the one reported.
        """
        bwrap = _find_bwrap(self.bwrap) if contained else None
        if contained and bwrap is None:
            raise SandboxUnavailable(f"bubblewrap ({self.bwrap!r}) was not found: {INSTALL_HINT}")
        spare = _LAUNCHER.take(bwrap, self.limits) if bwrap is not None and START_AHEAD else None
        if spare is not None:
            spare.release()
            if spare.greeted():
                self._use(spare)
                return
            spare.fail()
        server = _Server(bwrap, self.limits)
        server.release()
        if not server.greeted():
            detail = server.fail()
            raise SandboxUnavailable(
                f"bubblewrap could not start a sandbox ({detail or 'no answer from it'}). As a user other than "
                f"root it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                f"user.max_user_namespaces > 0, and no seccomp or AppArmor policy forbidding them); as root, "
                f"CAP_SYS_ADMIN and user namespaces (user.max_user_namespaces > 0). Otherwise {INSTALL_HINT}"
            )
        self._use(server)

    def _use(self, server: _Server) -> None:
        """Make the ready ``server`` this sandbox's."""
        self._server = server
        self._process, self._sock, self.sandboxed = server.process, server.sock, server.sandboxed
        self.uid, self._cgroup = server.uid, server.cgroup

    def close(self) -> None:
        """Kill the sandbox and everything in it; a later :meth:`run` starts a new one."""
        with self._lock:
            self._shutdown()

    def _shutdown(self) -> None:
        """Kill the sandbox; the caller holds the lock (or is the constructor)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        self._process = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(self, code: str, stdin: str = "", *, limits: Limits | None = None) -> RunResult:
        """Run ``code`` as ``main.py`` (``__main__``) with ``stdin``; returns its output, status and verdict."""
        limits = limits or self.limits
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._shutdown()
                self._start()
            return self._run(code, stdin, limits)

    def _run(self, code: str, stdin: str, limits: Limits) -> RunResult:
        """Send one program to the server, collect its output within the limits, read its report."""
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        code_fd = _memfd("main.py", code.encode("utf-8", errors="surrogateescape"))
        stdin_fd = _memfd("stdin", stdin.encode("utf-8", errors="surrogateescape"))
        # With a cgroup, the memory limit is the cgroup's, for all the sandbox's processes: no address-space limit.
        address_space = 0 if self._cgroup is not None else limits.memory_mb << 20
        request = (
            f"run {limits.cpu_seconds} {limits.wall_seconds} {address_space} {limits.max_processes} "
            f"{limits.max_open_files} {limits.max_file_mb << 20}"
        )
        oom_kills = 0
        if self._cgroup is not None:
            self._cgroup.limit_memory(limits.memory_mb)
            oom_kills = self._cgroup.oom_kills()
        started = time.monotonic()
        try:
            socket.send_fds(self._sock, [request.encode()], [code_fd, stdin_fd, out_write, err_write])
        except OSError:
            report = b""
        else:
            report = None
        finally:
            for fd in (code_fd, stdin_fd, out_write, err_write):
                os.close(fd)
        outputs = [bytearray(), bytearray()]
        truncated = False
        try:
            if report is None:
                report, truncated = self._collect(out_read, err_read, outputs, limits)
        finally:
            os.close(out_read)
            os.close(err_read)
        stdout, stderr = (bytes(o).decode("utf-8", errors="replace") for o in outputs)
        # The kernel's count of OOM kills in the sandbox's cgroup: the one memory verdict the program cannot fake.
        out_of_memory = self._cgroup is not None and self._cgroup.oom_kills() > oom_kills
        if not report or report == b"timeout":
            # The server died (the program killed it, which only a non-root run can) or never reported.
            self._shutdown()
            verdict: Verdict = "output_limit" if truncated else (
                "memory" if out_of_memory else "timeout" if report == b"timeout" else "error")
            note = "the sandbox did not report in time" if report == b"timeout" else "the sandbox's server died"
            return RunResult(
                stdout, stderr + f"\n[parlour.sandbox: {note}]\n", None, None, 0.0, time.monotonic() - started,
                verdict, truncated, self.sandboxed,
            )
        _done, exit_word, signal_word, cpu_word, wall_word, flags = report.decode().split()
        exit_code = None if exit_word == "-" else int(exit_word)
        signal_number = None if signal_word == "-" else int(signal_word)
        cpu = float(cpu_word)
        if "d" in flags:
            # The program left a process or a file the server could not remove: the next run gets a new sandbox.
            self._shutdown()
        if truncated:
            verdict = "output_limit"
        elif out_of_memory:
            verdict = "memory"
        elif "t" in flags or "c" in flags:
            # The server's clocks, never the program's signal: SIGXCPU sent to itself is an error like any other.
            verdict = "timeout"
        elif exit_code == 0:
            verdict = "ok"
        else:
            verdict = "error"
        return RunResult(stdout, stderr, exit_code, signal_number, cpu, float(wall_word), verdict, truncated,
                         self.sandboxed)

    def _collect(self, out_read: int, err_read: int, outputs: list[bytearray], limits: Limits) -> tuple[bytes, bool]:
        """Read stdout and stderr (at most ``max_output_bytes`` kept) until the server reports.

        Returns the report (``b""`` if the server died, ``b"timeout"`` if it missed its deadline) and whether
        the output was cut, in which case the server has been told to kill the program.
        """
        room = limits.max_output_bytes
        truncated = False
        report = None
        deadline = time.monotonic() + limits.wall_seconds + REPORT_GRACE
        with selectors.DefaultSelector() as selector:
            selector.register(out_read, selectors.EVENT_READ, 0)
            selector.register(err_read, selectors.EVENT_READ, 1)
            selector.register(self._sock, selectors.EVENT_READ, None)
            while report is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    report = b"timeout"
                    break
                for key, _events in selector.select(remaining):
                    if key.data is None:
                        report = self._sock.recv(4096)
                        continue
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk or truncated:
                        # After the cut the rest is read and dropped, so the program never blocks on a full pipe
                        # before the server's kill lands.
                        if not chunk:
                            selector.unregister(key.fd)
                        continue
                    keep = chunk[:room]
                    outputs[key.data] += keep
                    room -= len(keep)
                    if len(keep) < len(chunk):
                        truncated = True
                        try:
                            self._sock.send(b"kill")
                        except OSError:
                            pass  # the server is gone: the select sees its hang-up next
        # The report comes after the program is dead: what it wrote last is already in the pipes.
        for index, fd in enumerate((out_read, err_read)):
            os.set_blocking(fd, False)
            for _ in range(64):
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                keep = chunk[:room]
                outputs[index] += keep
                room -= len(keep)
                truncated = truncated or len(keep) < len(chunk)
        return report, truncated


def run_python(code: str, stdin: str = "", *, limits: Limits | None = None, allow_unsafe: bool = False) -> RunResult:
    """Run ``code`` with ``stdin`` in a fresh sandbox (see the module's notes), within ``limits``.

    Raises :class:`SandboxUnavailable` where bubblewrap is missing or cannot start, unless ``allow_unsafe``,
    which then runs the program unsandboxed (same limits, none of the isolation; development only).
    """
    with Sandbox(limits, allow_unsafe=allow_unsafe) as sandbox:
        return sandbox.run(code, stdin)



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
            try:
                sandbox._sock.send(b"kill")
            except OSError:
                pass
            thread.join(0.1)


def _probe_interfaces(bwrap: str | None) -> list[Probe]:
    """The network namespace has only loopback."""
    name = "network: no interface but loopback"
    # From /proc: if_nameindex() asks over a netlink socket, which the filter refuses.
    code = ("import json\nlines = open('/proc/net/dev').read().splitlines()[2:]\n"
            "print(json.dumps(sorted(line.split(':')[0].strip() for line in lines)))")
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


def _probe_listener(
    name: str, listener: socket.socket, connect: str, target: str, accepted_as: str, bwrap: str | None
) -> list[Probe]:
    """Have a fresh sandbox run ``connect`` (an expression that connects to the bound ``listener``, a host socket)
    and expect it to fail with the listener accepting nothing. ``target`` names the address in the detail and
    ``accepted_as`` the listener."""
    listener.listen()
    listener.setblocking(False)
    code = _ATTEMPTS + (
        "import socket\n"
        f"print(json.dumps(attempt(lambda: {connect})))\n"
    )
    result = _probe_run(code, bwrap)
    try:
        listener.accept()[0].close()
        accepted = True
    except BlockingIOError:
        accepted = False
    seen = _observe(result)
    if result.verdict != "ok" or seen not in (True, False):
        return [Probe(name, False, _failure(result))]
    return [Probe(name, not seen and not accepted,
                  f"connect to the host's {target}: {'succeeded' if seen else 'failed'}; {accepted_as}: {accepted}")]


def _probe_host_loopback(bwrap: str | None) -> list[Probe]:
    """A listener on the host's 127.0.0.1 hears nothing from the sandbox."""
    name = "network: the host's loopback is unreachable"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        return _probe_listener(name, listener, f"socket.create_connection(('127.0.0.1', {port}), timeout=2).close()",
                               f"127.0.0.1:{port}", "host listener accepted", bwrap)


def _probe_abstract_socket(bwrap: str | None) -> list[Probe]:
    """Abstract UNIX sockets belong to the network namespace: a host daemon's (D-Bus, X11...) are out of reach."""
    name = "network: the host's abstract UNIX sockets are unreachable"
    address = f"\0parlour-probe-{os.getpid()}-{time.monotonic_ns()}"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(address)
        return _probe_listener(name, listener, f"socket.socket(socket.AF_UNIX).connect({address!r})",
                               repr(address[1:]), "accepted", bwrap)


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
        probes.append(Probe(name, held, "; ".join(f"{path}: {mb} MB written, then {error}"
                                                  for path, (mb, error) in seen.items())))
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
_FACTS = _ATTEMPTS + """
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

# The bit of each capability the server keeps, in the kernel's capability sets.
_CAPABILITY_BITS = {"CAP_DAC_OVERRIDE": 1, "CAP_FOWNER": 3, "CAP_KILL": 5, "CAP_SETGID": 6, "CAP_SETUID": 7}

#: What /dev may hold: bubblewrap's minimal set, and the scratch /dev/shm.
ALLOWED_DEVICES = {"core", "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty",
                   "urandom", "zero"}


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
    host_namespaces = {kind: os.readlink(f"/proc/self/ns/{kind}") for kind in seen["namespaces"]
                       if os.path.exists(f"/proc/self/ns/{kind}")}
    shared = sorted(kind for kind, link in seen["namespaces"].items()
                    if link is None or link == host_namespaces.get(kind))
    regained = [way for way, ok in seen["regain"].items() if ok]
    others = sorted(set(seen["pids"]) - {1, 2, seen["pid"]})
    devices = sorted(set(seen["dev"]) - ALLOWED_DEVICES)
    capabilities = (seen["effective"], seen["permitted"], seen["ambient"])
    # As root the server keeps ROOT_CAPABILITIES (in the sandbox's user namespace); as another user, none.
    kept = sum(1 << _CAPABILITY_BITS[name] for name in ROOT_CAPABILITIES) if os.geteuid() == 0 else 0
    return [
        Probe(names[0], seen["uid"] != 0 and seen["gid"] != 0 and not any(capabilities),
              f"uid {seen['uid']}, gid {seen['gid']}, groups {seen['groups']}, capabilities effective "
              f"{seen['effective']:#x}, permitted {seen['permitted']:#x}, ambient {seen['ambient']:#x}"),
        Probe(names[1], not regained, f"succeeded: {regained}" if regained else f"all {len(seen['regain'])} refused"),
        Probe(names[2], seen["seccomp"] == "2" and seen["no_new_privs"] == "1" and not unknown,
              f"Seccomp: {seen['seccomp']}, NoNewPrivs: {seen['no_new_privs']}; "
              f"denied calls libseccomp does not know here: {list(unknown) or 'none'}"),
        Probe(names[3], not seen["open_fds"], f"descriptors open beyond 2: {seen['open_fds'] or 'none'}"),
        Probe(names[4], seen["hostname"] == "sandbox" and not seen["sethostname"],
              f"hostname {seen['hostname']!r}; sethostname {'succeeded' if seen['sethostname'] else 'refused'}"),
        Probe(names[5], not others and seen["ppid"] == 2,
              f"pids {seen['pids']}: the program is {seen['pid']}, its parent {seen['ppid']}"),
        Probe(names[6], not shared, f"shared with the host: {shared}" if shared else
              f"all {len(seen['namespaces'])} differ from the host's"),
        Probe(names[7], not seen["sys"] and not devices,
              f"/sys {'present' if seen['sys'] else 'absent'}; /dev holds {', '.join(seen['dev'])}"),
        Probe(names[8], not seen["bounding"] & ~kept,
              f"bounding set {seen['bounding']:#x}, of which beyond the server's {seen['bounding'] & ~kept:#x}"),
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
        ("clone", f"{flag:#x} | 17, 0, 0, 0, 0")
        for flag in (0x80, 0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000)],
    "clone3, whose flags the filter cannot read (ENOSYS: the C library falls back to clone)": [
        ("clone3", "buf(88), 1")],
    "joining namespaces (setns)": [("setns", "-1, 0"), ("setns", "fd('/proc/self/ns/uts'), 0")],
    "io_uring": [("io_uring_setup", "8, buf(120)"), ("io_uring_enter", "-1, 0, 0, 0, 0, 0"),
                 ("io_uring_register", "-1, 0, 0, 0")],
    "keyrings (add_key, keyctl, request_key)": [
        ("add_key", "text('user'), text('parlour-probe'), text('x'), 1, -3"), ("keyctl", "0, -3, 0"),
        ("request_key", "text('user'), text('parlour-probe'), 0, 0")],
    "SysV message queues": [("msgget", "0, 0o1600"), ("msgsnd", "-1, buf(16), 8, 0"),
                            ("msgrcv", "-1, buf(16), 8, 0, 0"),
                            ("msgctl", "-1, 2, buf(256)")],
    "SysV semaphores": [("semget", "0, 1, 0o1600"), ("semop", "-1, buf(8), 1"), ("semtimedop", "-1, buf(8), 1, 0"),
                        ("semctl", "-1, 0, 2, 0")],
    "SysV shared memory": [("shmget", "0, 4096, 0o1600"), ("shmat", "-1, 0, 0"), ("shmdt", "0"),
                           ("shmctl", "-1, 2, buf(256)")],
    "POSIX message queues (mq_open, ...)": [
        ("mq_open", "text('parlour-probe'), 0o100 | 2, 0o600, 0"), ("mq_unlink", "text('parlour-probe')"),
        ("mq_timedsend", "-1, buf(8), 8, 0, 0"), ("mq_timedreceive", "-1, buf(8), 8, 0, 0"),
        ("mq_notify", "-1, 0"), ("mq_getsetattr", "-1, 0, buf(64)")],
    "sockets of every family but AF_UNIX (inet, netlink, packet, vsock...)": [
        *[("socket", f"{family}, 1, 0") for family in (0, *range(2, 46), 64, 255, 1 << 32 | 2)],
        ("socketpair", "2, 1, 0, buf(8)"), ("socketpair", "10, 1, 0, buf(8)"), ("socketpair", "40, 1, 0, buf(8)")],
    "tracing the server and init (ptrace)": [("ptrace", "16, ppid, 0, 0"), ("ptrace", "16, 1, 0, 0")],
    "other processes' memory and descriptors (process_vm_*, pidfd_getfd, kcmp)": [
        ("process_vm_readv", "ppid, buf(16), 1, buf(16), 1, 0"),
        ("process_vm_writev", "ppid, buf(16), 1, buf(16), 1, 0"),
        ("pidfd_getfd", "-1, 0, 0"), ("kcmp", "os.getpid(), os.getpid(), 0, 0, 0")],
    "mounts (mount, umount2)": [("mount", "text('none'), text('/tmp'), text('tmpfs'), 0, 0"),
                                ("umount2", "text('/tmp'), 2")],
    "changing the root (pivot_root, chroot)": [("pivot_root", "text('/tmp'), text('/tmp')"),
                                               ("chroot", "text('/tmp')")],
    "the new mount API (fsopen, open_tree, ...)": [
        ("fsopen", "text('tmpfs'), 0"), ("open_tree", "-100, text('/tmp'), 0"), ("fspick", "-100, text('/tmp'), 0"),
        ("fsconfig", "-1, 0, 0, 0, 0"), ("fsmount", "-1, 0, 0"), ("move_mount", "-1, text(''), -1, text(''), 0"),
        ("mount_setattr", "-1, text(''), 0, 0, 0")],
    "eBPF (bpf)": [("bpf", "0, buf(128), 128"), ("bpf", "5, buf(128), 128")],
    "performance counters (perf_event_open)": [("perf_event_open", "buf(128), 0, -1, -1, 0")],
    "kexec (kexec_load, kexec_file_load)": [("kexec_load", "0, 0, 0, 0"),
                                            ("kexec_file_load", "-1, -1, 0, text(''), 0")],
    "kernel modules (init_module, finit_module, delete_module)": [
        ("init_module", "buf(16), 16, text('')"), ("finit_module", "-1, text(''), 0"),
        ("delete_module", "text('parlour'), 0")],
    "terminal input injection (ioctl TIOCSTI, TIOCLINUX)": [("ioctl", "tty(), 0x5412, buf(1)"),
                                                           ("ioctl", "tty(), 0x541C, buf(1)")],
    "userfaultfd": [("userfaultfd", "1")],
    "the clock (settimeofday, clock_settime, clock_adjtime, adjtimex)": [
        ("settimeofday", "buf(16), 0"), ("clock_settime", "0, buf(16)"), ("clock_adjtime", "0, buf(256)"),
        ("adjtimex", "buf(256)")],
    "execution domains (personality: ASLR off)": [("personality", "0x0040000")],
    "file handles (name_to_handle_at, open_by_handle_at)": [
        ("name_to_handle_at", "-100, text('/tmp'), buf(136), buf(8), 0"), ("open_by_handle_at", "-1, buf(136), 0")],
    "kernel log, accounting, quotas, swap, reboot": [
        ("syslog", "10, 0, 0"), ("acct", "0"), ("quotactl", "0, 0, 0, 0"), ("swapon", "text('/tmp/main.py'), 0"),
        ("swapoff", "text('/tmp/main.py')"), ("reboot", "0, 0, 0, 0")],
    "I/O ports (iopl, ioperm)": [("iopl", "3"), ("ioperm", "0, 1, 1")],
    "profiling, filesystem-wide notification, terminals and obsolete calls": [
        ("lookup_dcookie", "0, buf(8), 8"), ("fanotify_init", "0, 0"), ("vhangup", "()"),
        ("uselib", "text('/tmp/main.py')"), ("sysfs", "3"), ("nfsservctl", "0, 0, 0")],
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
    calls = [(family, name, numbers[name], arguments) for family, tries in SECCOMP_FAMILIES.items()
             for name, arguments in tries if name in numbers]
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
        probes.append(Probe(name, held, ", ".join(f"{word} x{count}" if count > 1 else word
                                                  for word, count in Counter(words).items())))
    return probes


#: One probe per family of the masked /proc files: each reads empty, or the sandbox's own figures.
PROC_FAMILIES = {
    "kernel symbols and modules": ("kallsyms", "modules"),
    "keys of every user": ("keys", "key-users"),
    "timers and the scheduler": ("timer_list", "sched_debug"),
    "interrupts": ("interrupts", "softirqs"),
    "memory (the sandbox's budget in meminfo)": ("meminfo", "vmstat", "zoneinfo", "buddyinfo", "pagetypeinfo",
                                                  "slabinfo"),
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
        probes.append(Probe(name, held, f"host uids {hosts[0]} and {hosts[1]}; user namespaces "
                                        f"{a['user namespace']} and {b['user namespace']}"))
    name = "replay: every slot shows a program the same uid, gid, hostname, folders, process ids and cgroup"
    if one.verdict != "ok" or two.verdict != "ok" or not a or not b:
        probes.append(Probe(name, False, _failure(one if one.verdict != "ok" else two)))
    else:
        del a["user namespace"], b["user namespace"]
        differ = sorted(key for key in a if a[key] != b.get(key))
        probes.append(Probe(name, not differ, f"differ: {differ}" if differ else
                            f"alike: uid {a['uid']}, gid {a['gid']}, hostname {a['hostname']!r}, "
                            f"cwd {a['cwd']}, pid {a['pid']}, cgroup {a['cgroup']!r}"))
    name = "processes: a neighbour holding its whole process limit does not stop forks here"
    limits = Limits(max_processes=16, wall_seconds=10)
    holder = ("import os, time\nfor _ in range(15):\n    if os.fork() == 0:\n        time.sleep(30)\n"
              "        os._exit(0)\ntime.sleep(30)\n")
    forker = ("import os\nfor _ in range(8):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n"
              "    os.waitpid(pid, 0)\nprint('forked')")
    with Sandbox(limits, bwrap=bwrap) as first, Sandbox(limits, bwrap=bwrap) as second:
        result, _held = _beside(first, holder, limits, 16, lambda: second.run(forker))
    probes.append(Probe(name, (result.verdict, result.stdout) == ("ok", "forked\n"),
                        f"the neighbour's forks: verdict {result.verdict}, {result.stderr.strip()[-200:]!r}"))
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
    return [Probe(name, held, f"{forked} forks succeeded under a limit of {limit}; "
                  f"{left} processes in the sandbox at the next run")]


# How many processes the sandbox holds, seen from inside.
_CENSUS = "import os\nprint(sum(p.isdigit() for p in os.listdir('/proc')))"


def _probe_daemon(bwrap: str | None) -> list[Probe]:
    """A child that leaves the program's session and spins does not hold up the verdict or outlive the run."""
    name = "processes: a setsid() daemon that spins is killed at the end of its run, which ends ok"
    code = "import os\nif os.fork() == 0:\n    os.setsid()\n    while True:\n        pass\nprint('left')"
    run, after = _probe_run(code, bwrap, follow_up=_CENSUS)
    if run.verdict != "ok" or after.verdict != "ok":
        return [Probe(name, False, _failure(run if run.verdict != "ok" else after))]
    return [Probe(name, int(after.stdout) <= 3,
                  f"verdict {run.verdict} after {run.wall_seconds:.2f} s; "
                  f"{after.stdout.strip()} processes at the next run")]


def _probe_pid_numbering(bwrap: str | None) -> list[Probe]:
    """Fresh sandboxes number processes alike: no PID state passes between them (warm runs do carry it)."""
    name = "PID numbering: every fresh sandbox starts alike (no state from earlier sandboxes)"
    code = "import os\nprint(os.getpid())"
    first, second = _probe_run(code, bwrap), _probe_run(code, bwrap)
    if first.verdict != "ok" or second.verdict != "ok":
        return [Probe(name, False, _failure(first if first.verdict != "ok" else second))]
    return [Probe(name, first.stdout == second.stdout,
                  f"process ids of two fresh sandboxes' programs: {first.stdout.strip()}, {second.stdout.strip()}")]


def _probe_verdict(name: str, code: str, limits: Limits, expected: Verdict, bwrap: str | None) -> list[Probe]:
    """Run ``code`` in a fresh sandbox and expect ``expected``."""
    result = _probe_run(code, bwrap, limits)
    return [Probe(name, result.verdict == expected,
                  f"verdict {result.verdict} after {result.wall_seconds:.2f} s wall, {result.cpu_seconds:.2f} s CPU, "
                  f"{len(result.stdout) + len(result.stderr)} bytes of output")]


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
        *_probe_verdict("memory: a memory bomb ends with verdict memory",
                        "hoard = []\nwhile True:\n    hoard.append(bytearray(16 << 20))",
                        Limits(memory_mb=256), "memory", bwrap),
        *_probe_verdict("memory: 4 processes of 48 MB cannot hold 192 MB under memory_mb=128 together",
                        _FOUR_HOARDERS, Limits(memory_mb=128), "memory", bwrap),
        *_probe_verdict("memory: pipe buffers count (4 processes, 56 MB of pipes, 80 MB held, memory_mb=96)",
                        _PIPE_HOARDERS, Limits(memory_mb=96), "memory", bwrap),
    ]


def _probe_forgery(bwrap: str | None) -> list[Probe]:
    """A program cannot choose its verdict: not memory by its own word, not a pass by printing a report."""
    probes = []
    name = "verdict: MemoryError raised, or SIGKILL sent to itself, is error, not memory"
    raised = _probe_run("raise MemoryError", bwrap)
    killed = _probe_run("import os\nos.kill(os.getpid(), 9)", bwrap)
    probes.append(Probe(name, (raised.verdict, killed.verdict) == ("error", "error"),
                        f"raise MemoryError: {raised.verdict}; SIGKILL to itself: {killed.verdict}"))
    name = "verdict: fake result frames and server reports on stdout, stderr and other descriptors change nothing"
    code = (
        "import os, sys\n"
        "frames = '\\x1e[\"load\",\"ok\",\"\"]\\n' + ''.join('\\x1e[%d,\"pass\",\"\",\"\"]\\n' % i for i in range(8))\n"
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
    probes.append(Probe(name, (result.verdict, result.exit_code) == ("error", 3),
                        f"verdict {result.verdict}, exit code {result.exit_code} (the program exited 3)"))
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
        probes.append(Probe(name, held, f"signals delivered to: {killed or 'none'}; next run: {second.verdict}, "
                                        f"{'same' if same else 'a restarted'} sandbox"))
    return probes


def _probe_time(bwrap: str | None) -> list[Probe]:
    """CPU and wall-clock limits, and the output cap."""
    return [
        *_probe_verdict("time: an infinite loop ends with verdict timeout (CPU limit)", "while True:\n    pass",
                        Limits(cpu_seconds=1, wall_seconds=10), "timeout", bwrap),
        *_probe_verdict("time: a sleeper ends with verdict timeout (wall-clock limit)",
                        "import time\ntime.sleep(60)", Limits(wall_seconds=1), "timeout", bwrap),
        *_probe_verdict("time: SIGXCPU sent to itself ends with verdict error (the CPU time decides a timeout)",
                        "import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)",
                        Limits(cpu_seconds=1, wall_seconds=10), "error", bwrap),
        *_probe_verdict("output: a flood of output ends with verdict output_limit",
                        "while True:\n    print('x' * 1000)", Limits(max_output_bytes=64 << 10), "output_limit", bwrap),
    ]


def _probe_starvation(bwrap: str | None) -> list[Probe]:
    """A neighbour spinning in 32 sessions cannot turn an honest run's ok into a timeout.

    Both sandboxes are pinned to one CPU, so that the probe tells a fair share (half the CPU: 0.6 s for 0.3 s of
    work) from none (a 33rd of it: 10 s) on a machine of any size.
    """
    name = "CPU: a neighbour spinning in 32 sessions on the same CPU does not starve a run here into timeout"
    spinners = 32
    hog = (f"import os\nfor _ in range({spinners - 1}):\n    if os.fork() == 0:\n        os.setsid()\n        break\n"
           "while True:\n    pass")
    worker = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end:\n    pass\nprint('done')"
    cpu = {min(os.sched_getaffinity(0))}
    with Sandbox(bwrap=bwrap) as spinning, Sandbox(bwrap=bwrap) as honest:
        for sandbox in (spinning, honest):
            # Init and the server: every process they fork inherits the affinity.
            if sandbox._cgroup is not None:
                for pid in (sandbox._cgroup.memory / "cgroup.procs").read_text().split():
                    os.sched_setaffinity(int(pid), cpu)
        result, _hog = _beside(spinning, hog, Limits(max_processes=40, cpu_seconds=30, wall_seconds=30), spinners,
                               lambda: honest.run(worker, limits=Limits(cpu_seconds=1, wall_seconds=5)))
    return [Probe(name, (result.verdict, result.stdout) == ("ok", "done\n"),
                  f"verdict {result.verdict} after {result.wall_seconds:.2f} s wall "
                  f"for {result.cpu_seconds:.2f} s CPU")]


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
        outer = sandbox._process.pid
        inner = [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
                 if (_bwrap_stat(pid) or ("", 0))[1] == outer]
    finally:
        sandbox.close()
    left = {pid: stat[0] for pid in [outer, *inner] if (stat := _bwrap_stat(pid)) is not None}
    return [Probe(name, bool(inner) and not left,
                  f"bubblewrap {outer} and init {inner}: left after close: {left or 'none'}")]


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
        f"; kill() raised no error for: {', '.join(k for k, ok in seen.items() if ok) or 'none'}" if seen else "")
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
    name = ("SysV IPC and POSIX message queues: a queue, semaphore or segment made by one run cannot reach the next "
            "in the same sandbox")
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
        probes.append(Probe(name, all(answer == errno.EPERM for answer in answers.values()),
                            ", ".join(f"{call}: {_answer(answer)}" for call, answer in answers.items())))
    return probes


#: The probe suite, in the order ``parlour doctor sandbox`` prints it.
PROBES = (
    _probe_interfaces, _probe_outside, _probe_host_loopback, _probe_abstract_socket, _probe_raw_sockets,
    _probe_writes, _probe_reads, _probe_scratch_and_files, _probe_warm_forgets, _probe_environment, _probe_facts,
    _probe_seccomp, _probe_proc, _probe_slots, _probe_fork_bomb, _probe_daemon, _probe_pid_numbering, _probe_memory,
    _probe_forgery, _probe_time, _probe_starvation, _probe_zombies, _probe_signals, _probe_state_between_runs,
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
            probes.append(Probe(probe.__doc__.splitlines()[0], False, f"the probe raised {error!r}"))
    return probes
