"""The fork server that runs inside a sandbox of :mod:`parlour.sandbox`.

:mod:`parlour.sandbox` compiles it once and starts it in each sandbox as ``python -s -P -S -X utf8 -c BOOTSTRAP
CODE_FD FD MODE UID WORKDIR [SCRATCH...]`` (the bootstrap runs the marshalled code it reads from ``CODE_FD``),
and speaks to it over the ``AF_UNIX`` ``SOCK_SEQPACKET`` socket ``FD``. Each request runs one program: the
server forks, the child applies the limits, drops root (to ``UID``, the sandbox's own uid; ``-`` keeps the
caller's) and runs the program as ``__main__`` in the already started interpreter, which is what makes warm
runs fast; the server waits for it, enforces the wall-clock limit, kills whatever the program left behind, empties the scratch folders (the
working directory and any others) and reports.

It imports only modules that load in well under a millisecond (no ``json``, ``socket``, ``shutil`` or
``signal``, which pull in ``re`` and ``enum``), because its start-up is part of every cold run.

Protocol (ASCII words, one message per packet):

* server to host, once: ``ready``.
* host to server: ``run CPU_S WALL_S MEMORY_B PROCESSES FILES FILE_B`` with four file descriptors: the
  program's source (a memfd), its stdin (a memfd), the write ends of its stdout and stderr pipes. ``MEMORY_B``
  0 sets no address-space limit: the host's cgroup then holds the sandbox's memory.
* host to server, during a run: ``kill`` (the host saw too much output).
* server to host, after each run: ``done EXIT SIGNAL CPU_S WALL_S FLAGS`` where ``EXIT``/``SIGNAL`` are a
  number or ``-``, and ``FLAGS`` holds ``t`` (wall-clock limit hit), ``c`` (CPU limit reached: the program's
  CPU time, read by the server from the kernel's clock ``RLIMIT_CPU`` is held against, reached the limit), ``k``
  (killed on request) and ``d`` (a process or a scratch file could not be removed: start a new sandbox).

The program cannot write to the socket (its process closes every descriptor but its three standard ones before
any of its code runs) nor reach the server (another uid, no capabilities, a seccomp filter against ``ptrace``
and ``pidfd_getfd``), so a report says what the server saw, never what the program claims: nothing the
program raises or prints reaches it.
"""

import _socket
import atexit
import builtins
import gc
import os
import resource
import select
import sys
import time

# typing's TYPE_CHECKING without importing typing (mypy reads the name; at run time the block is skipped).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType

# signal.SIGKILL without importing signal (enum makes it cost a millisecond of every cold start).
SIGKILL = 9
PROGRAM = "main.py"
# The clock id of a process's CPUCLOCK_PROF clock (user and system time as the scheduler's ticks count them, the
# clock RLIMIT_CPU is held against): the kernel's MAKE_PROCESS_CPUCLOCK(pid, 0), that is (~pid << 3) | 0.
PROF_CLOCK = -8


def cpu_limit(cpu_seconds: float) -> int:
    """The RLIMIT_CPU soft limit for ``cpu_seconds``: whole seconds, rounded up, at least one."""
    return max(1, int(-(-cpu_seconds // 1)))


def cpu_time(pid: int) -> float:
    """The CPU time of process ``pid`` (ended but not yet reaped, or alive) on its CPUCLOCK_PROF clock; 0.0 if it
    cannot be read."""
    try:
        return time.clock_gettime(PROF_CLOCK * (pid + 1))
    except OSError:
        return 0.0


def receive(sock: _socket.socket) -> tuple[bytes, list[int]]:
    """One packet and the file descriptors it carries (close-on-exec in this process)."""
    data, ancillary, _flags, _address = sock.recvmsg(4096, _socket.CMSG_SPACE(16 * 4), _socket.MSG_CMSG_CLOEXEC)
    fds = []
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i : i + 4], sys.byteorder, signed=True) for i in range(0, usable, 4)]
    return data, fds


def read_all(fd: int) -> bytes:
    """Everything readable from ``fd`` from its current offset."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def empty_folder(path: str) -> None:
    """Delete everything inside ``path``, never following a symlink the program may have planted."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        empty_folder_fd(fd)
    finally:
        os.close(fd)


def empty_folder_fd(dir_fd: int) -> None:
    """Delete everything inside the directory open as ``dir_fd``."""
    for entry in list(os.scandir(dir_fd)):
        if entry.is_dir(follow_symlinks=False):
            try:
                sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            except PermissionError:
                # A folder the program made unreadable; it is dead by now, so this cannot race it.
                os.chmod(entry.name, 0o700, dir_fd=dir_fd)
                sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            try:
                os.fchmod(sub, 0o700)
                empty_folder_fd(sub)
            finally:
                os.close(sub)
            os.rmdir(entry.name, dir_fd=dir_fd)
        else:
            os.unlink(entry.name, dir_fd=dir_fd)


def sweep(pid: int, contained: bool) -> bool:
    """Kill every process the program started, wherever it went; False if some could not be made to go."""
    if not contained:
        try:
            os.killpg(pid, SIGKILL)
        except ProcessLookupError:
            pass
        return True
    # Alone in its PID namespace, the server may kill everything it can signal: kill(-1) spares it and the
    # namespace's init, and reaches children that escaped with setsid(). It waits (a little) until init has
    # reaped them, since the dead count against the next run's process limit until then, and repeats the kill
    # for any child forked while the signal was on its way.
    me = str(os.getpid())
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            os.kill(-1, SIGKILL)
        except ProcessLookupError:
            return True
        if not any(name.isdigit() and name not in ("1", me) for name in os.listdir("/proc")):
            return True
        time.sleep(0.001)
    return False


def supervise(sock: _socket.socket, pid: int, wall_seconds: float, started: float) -> tuple[bool, bool, bool]:
    """Wait for the program to end; returns (wall limit hit, killed on request, host gone)."""
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(sock.fileno(), select.POLLIN)
    deadline = started + wall_seconds
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.kill(pid, SIGKILL)
                return True, False, False
            for fd, _event in poller.poll(remaining * 1000):
                if fd == pidfd:
                    return False, False, False
                message = sock.recv(4096)
                if message == b"kill" or not message:
                    os.kill(pid, SIGKILL)
                    return False, bool(message), not message
    finally:
        os.close(pidfd)


def serve(sock: _socket.socket, contained: bool, scratch: list[str]) -> tuple[list[float], list[int]] | None:
    """Run programs until the host hangs up; returns ``(limits, fds)`` in each forked child, None in the server."""
    sock.send(b"ready")
    while True:
        message, fds = receive(sock)
        if not message:
            return None
        words = message.split()
        if words[0] != b"run" or len(fds) != 4:
            # A "kill" that crossed the report of a run that had already ended.
            for fd in fds:
                os.close(fd)
            continue
        limits = [float(word) for word in words[1:]]
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            sock.close()
            return limits, fds
        for fd in fds:
            os.close(fd)
        timed_out, stopped, host_gone = supervise(sock, pid, limits[1], started)
        # Read before the reap, while the clock still names the program. Its own signal proves nothing: a program
        # may send itself SIGXCPU, but it cannot make the kernel count CPU time it did not use.
        over_cpu = cpu_time(pid) >= cpu_limit(limits[0])
        _pid, status, usage = os.wait4(pid, 0)
        wall = time.monotonic() - started
        swept = sweep(pid, contained)
        if host_gone:
            return None
        flags = ("t" if timed_out else "") + ("c" if over_cpu else "") + ("k" if stopped else "")
        try:
            for folder in scratch:
                empty_folder(folder)
        except (OSError, RecursionError):
            swept = False
        if not swept:
            flags += "d"
        exit_code = str(os.WEXITSTATUS(status)) if os.WIFEXITED(status) else "-"
        signal = str(os.WTERMSIG(status)) if os.WIFSIGNALED(status) else "-"
        cpu = usage.ru_utime + usage.ru_stime
        sock.send(f"done {exit_code} {signal} {cpu:.6f} {wall:.6f} {flags or '-'}".encode())


class Quitter:
    """``exit`` and ``quit`` as the ``site`` module defines them (the server runs with ``-S``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Use {self.name}() or Ctrl-D (i.e. EOF) to exit"

    def __call__(self, code: object = None) -> None:
        try:
            sys.stdin.close()
        except Exception:
            pass
        raise SystemExit(code)


def set_limit(which: int, value: int) -> None:
    """Set soft and hard limit, capped at a hard limit the server cannot raise (without root)."""
    _soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def enter(limits: list[float], fds: list[int], uid: int | None, workdir: str) -> "tuple[CodeType, dict[str, object]]":
    """In the forked child: become the program's process; returns its code object and ``__main__`` namespace."""
    cpu_seconds, _wall, memory, processes, files, file_bytes = limits
    code_fd, stdin_fd, stdout_fd, stderr_fd = fds
    os.setsid()
    source = read_all(code_fd)
    os.dup2(stdin_fd, 0)
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)
    os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    os.chdir(workdir)
    fd = os.open(PROGRAM, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    os.write(fd, source)
    os.close(fd)
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    cpu = cpu_limit(cpu_seconds)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if memory:
        set_limit(resource.RLIMIT_AS, int(memory))
    set_limit(resource.RLIMIT_FSIZE, int(file_bytes))
    set_limit(resource.RLIMIT_NPROC, int(processes))
    set_limit(resource.RLIMIT_NOFILE, int(files))
    set_limit(resource.RLIMIT_CORE, 0)

    def excepthook(kind, value, traceback) -> None:
        # Show the program's frames only, as `python main.py` would; the default hook prints the traceback
        # the exception carries, so the trimmed one goes there.
        while traceback is not None and traceback.tb_frame.f_code.co_filename == "<string>":
            traceback = traceback.tb_next
        sys.__excepthook__(kind, value.with_traceback(traceback), traceback)

    sys.excepthook = excepthook
    sys.argv[:] = [PROGRAM]
    # typeshed types these as site's Quitter, which -S leaves out: this class stands in for it.
    builtins.exit = Quitter("exit")  # type: ignore[assignment]
    builtins.quit = Quitter("quit")  # type: ignore[assignment]
    main = type(sys)("__main__")
    main.__file__ = PROGRAM
    sys.modules["__main__"] = main
    return compile(source, PROGRAM, "exec"), main.__dict__


def exit_status(exit: SystemExit) -> int:
    """The process exit status Python gives ``raise SystemExit(code)``."""
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code & 0xFF
    print(exit.code, file=sys.stderr)
    return 1


def finish(namespace: dict, status: int) -> int:
    """Python's shutdown, up to what a program can observe; returns the exit status.

    The child then leaves with ``os._exit``: a full interpreter finalization would touch every page of the
    server's heap it shares copy-on-write, and cost more than the run itself.
    """
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    atexit._run_exitfuncs()
    # Finalization would clear __main__: the program's objects die, their __del__ run, its files flush.
    namespace.clear()
    gc.collect()
    try:
        sys.stdout.flush()
    except Exception:
        status = 120
    try:
        sys.stderr.flush()
    except Exception:
        pass
    return status


def main() -> None:
    """Serve; in each forked child, run the program and end as the interpreter would."""
    sock = _socket.socket(fileno=int(sys.argv[1]))
    contained = sys.argv[2] == "contained"
    uid = None if sys.argv[3] == "-" else int(sys.argv[3])
    workdir, *scratch = sys.argv[4:]
    scratch.insert(0, workdir)
    if uid is not None:
        # bubblewrap makes the tmpfs root's; the programs run as the sandbox's uid and share it like any /tmp.
        for folder in scratch:
            os.chmod(folder, 0o1777)
    # The first compile() in a process builds the compiler's AST types, about 2 ms: done once here, every
    # child inherits them.
    compile("pass", PROGRAM, "exec")
    # Keep the collector off the server's objects, so that children do not copy their pages.
    gc.freeze()
    job = serve(sock, contained, scratch)
    if job is None:
        return
    namespace: dict[str, object] = {}
    try:
        code, namespace = enter(*job, uid, workdir)
        exec(code, namespace)
        status = 0
    except SystemExit as exit:
        status = exit_status(exit)
    except BaseException as error:
        sys.excepthook(type(error), error, error.__traceback__)
        status = 1
    os._exit(finish(namespace, status))


if __name__ == "__main__":
    main()
