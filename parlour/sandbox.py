"""Run untrusted Python: bubblewrap namespaces, a private filesystem, resource limits and a wall clock.

    from parlour.sandbox import run_python

    result = run_python("print(sum(map(int, input().split())))", stdin="2 3")
    result.verdict, result.stdout               # ("ok", "5\\n")

``run_python`` starts a fresh sandbox per program. :class:`Sandbox` keeps one warm (a fork server inside) for
fast scratch runs. ``parlour doctor sandbox`` runs :func:`parlour.sandbox_probes.run_probes`, the containment
checks, on this machine.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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
    "unshare": "new namespaces",
    "setns": "joining namespaces",
    # Keyrings are per uid and outlive the sandbox.
    "add_key": "keyrings",
    "keyctl": "keyrings",
    "request_key": "keyrings",
    # io_uring: a second system-call interface that seccomp cannot see into.
    "io_uring_setup": "io_uring",
    "io_uring_enter": "io_uring",
    "io_uring_register": "io_uring",
    # SysV IPC objects outlive the program that made them (a warm sandbox keeps its IPC namespace).
    "msgget": "SysV IPC",
    "msgsnd": "SysV IPC",
    "msgrcv": "SysV IPC",
    "msgctl": "SysV IPC",
    "semget": "SysV IPC",
    "semop": "SysV IPC",
    "semtimedop": "SysV IPC",
    "semctl": "SysV IPC",
    "shmget": "SysV IPC",
    "shmat": "SysV IPC",
    "shmdt": "SysV IPC",
    "shmctl": "SysV IPC",
    # Reaching into other processes (the server, the next run).
    "ptrace": "tracing",
    "process_vm_readv": "other processes' memory",
    "process_vm_writev": "other processes' memory",
    "pidfd_getfd": "stealing file descriptors",
    "kcmp": "comparing kernel objects",
    # Mounts, old and new API.
    "mount": "mounts",
    "umount2": "mounts",
    "pivot_root": "mounts",
    "chroot": "mounts",
    "fsopen": "mounts",
    "fsconfig": "mounts",
    "fsmount": "mounts",
    "fspick": "mounts",
    "move_mount": "mounts",
    "open_tree": "mounts",
    "mount_setattr": "mounts",
    # Kernel attack surface an unprivileged program has no use for.
    "bpf": "eBPF",
    "perf_event_open": "performance counters",
    "userfaultfd": "userfaultfd (exploit aid)",
    "kexec_load": "kexec",
    "kexec_file_load": "kexec",
    "init_module": "kernel modules",
    "finit_module": "kernel modules",
    "delete_module": "kernel modules",
    "open_by_handle_at": "file handles",
    "name_to_handle_at": "file handles",
    "acct": "accounting",
    "quotactl": "quotas",
    "swapon": "swap",
    "swapoff": "swap",
    "reboot": "reboot",
    "syslog": "the kernel log",
    "settimeofday": "the clock",
    "clock_settime": "the clock",
    "clock_adjtime": "the clock",
    "adjtimex": "the clock",
    "lookup_dcookie": "profiling",
    "fanotify_init": "filesystem-wide notification",
    "iopl": "I/O ports",
    "ioperm": "I/O ports",
    "personality": "execution domains (ASLR off)",
    "vhangup": "terminals",
    "uselib": "obsolete",
    "sysfs": "obsolete",
    "nfsservctl": "obsolete",
    # POSIX message queues outlive the program that made them, as SysV IPC does.
    "mq_open": "POSIX message queues",
    "mq_unlink": "POSIX message queues",
    "mq_timedsend": "POSIX message queues",
    "mq_timedreceive": "POSIX message queues",
    "mq_notify": "POSIX message queues",
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
MASKED_PROC = (
    "kallsyms",
    "keys",
    "key-users",
    "timer_list",
    "sched_debug",
    "interrupts",
    "softirqs",
    "vmstat",
    "zoneinfo",
    "buddyinfo",
    "pagetypeinfo",
    "slabinfo",
    "diskstats",
    "partitions",
    "swaps",
    "modules",
    "iomem",
    "ioports",
    "latency_stats",
    "locks",
    "cgroups",
    "sysvipc/msg",
    "sysvipc/sem",
    "sysvipc/shm",
    "pressure/cpu",
    "pressure/memory",
    "pressure/io",
    "pressure/irq",
    "sys/fs/file-nr",
    "sys/fs/inode-nr",
    "sys/kernel/random/boot_id",
    "cmdline",
)


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
BOOTSTRAP = "import marshal, os, sys\nfd = int(sys.argv.pop(1))\nserver = marshal.loads(os.read(fd, 1 << 24))\nos.close(fd)\nexec(server)\n"


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
    for prefix in dict.fromkeys(os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix, os.path.dirname(interpreter))):
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
    return [
        _interpreter(),
        "-s",
        "-P",
        "-S",
        "-X",
        "utf8",
        "-c",
        BOOTSTRAP,
        str(code_fd),
        str(fd),
        mode,
        "-" if uid is None else str(uid),
        workdir,
        *scratch,
    ]


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
    return {
        "meminfo": meminfo.encode(),
        "stat": stat.encode(),
        "loadavg": b"0.00 0.00 0.00 1/1 1\n",
        "uptime": b"0.00 0.00\n",
        "cpuinfo": cpuinfo.encode(),
    }


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
    mounts: list[tuple[str, str, str, set[str]]] = []
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
            inside = path[len(root) :] if root != "/" and path.startswith(root) else path
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


def _terminate(process: subprocess.Popen, sock: socket.socket, init: int | None, slot: _Slot | None, workdir: str) -> None:
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


def _read_info(fd: int, deadline: float) -> dict[str, Any]:
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
                child: int | None = _read_info(info_read, time.monotonic() + START_TIMEOUT).get("child-pid")
                if not child:
                    _kill_group(process)
                else:
                    # Still blocked, so alive: the pidfd names it, never a later process that reuses its pid.
                    init = os.pidfd_open(child)
                    if uid is not None:
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
        # Set by the constructor's _start (which raises if it cannot) and never reset to None.
        assert self._sock is not None
        started = time.monotonic()
        report: bytes | None
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
                report, truncated = self._collect(self._sock, out_read, err_read, outputs, limits)
        finally:
            os.close(out_read)
            os.close(err_read)
        stdout, stderr = (bytes(o).decode("utf-8", errors="replace") for o in outputs)
        # The kernel's count of OOM kills in the sandbox's cgroup: the one memory verdict the program cannot fake.
        out_of_memory = self._cgroup is not None and self._cgroup.oom_kills() > oom_kills
        if not report or report == b"timeout":
            # The server died (the program killed it, which only a non-root run can) or never reported.
            self._shutdown()
            verdict: Verdict = "output_limit" if truncated else ("memory" if out_of_memory else "timeout" if report == b"timeout" else "error")
            note = "the sandbox did not report in time" if report == b"timeout" else "the sandbox's server died"
            return RunResult(
                stdout,
                stderr + f"\n[parlour.sandbox: {note}]\n",
                None,
                None,
                0.0,
                time.monotonic() - started,
                verdict,
                truncated,
                self.sandboxed,
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
        return RunResult(stdout, stderr, exit_code, signal_number, cpu, float(wall_word), verdict, truncated, self.sandboxed)

    def _collect(self, sock: socket.socket, out_read: int, err_read: int, outputs: list[bytearray], limits: Limits) -> tuple[bytes, bool]:
        """Read stdout and stderr (at most ``max_output_bytes`` kept) until the server reports on ``sock``.

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
            selector.register(sock, selectors.EVENT_READ, None)
            while report is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    report = b"timeout"
                    break
                for key, _events in selector.select(remaining):
                    if key.data is None:
                        report = sock.recv(4096)
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
                            sock.send(b"kill")
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
