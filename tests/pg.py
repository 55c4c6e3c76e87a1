"""A throwaway PostgreSQL server for the leaderboard's store tests.

:func:`postgres_server` yields a SQLAlchemy URL: ``$PARLOUR_TEST_POSTGRES_URL``
when it is set, else a private cluster made with ``initdb`` and started with
``pg_ctl`` (from the Debian package ``postgresql``) in a temporary directory,
listening on a free loopback port only, run as the ``postgres`` user when the
tests run as root. Without the binaries the PostgreSQL tests skip, naming the
package to install.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

APT_HINT = "PostgreSQL server binaries not found; install the Debian package 'postgresql' (apt-get install -y postgresql)"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _binaries() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


@contextmanager
def postgres_server() -> Iterator[str]:
    """Yield the URL of a PostgreSQL database for tests (see the module docstring); skips when none can be had."""
    url = os.environ.get("PARLOUR_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    bindir = _binaries()
    if bindir is None:
        pytest.skip(APT_HINT)
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    workdir = tempfile.mkdtemp(prefix="parlour-pg-")
    data = os.path.join(workdir, "data")
    if as_root:
        shutil.chown(workdir, "postgres")
    port = free_port()
    run = {"check": True, "capture_output": True, "timeout": 120}
    subprocess.run([*prefix, f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"], **run)
    options = f"-p {port} -k {workdir} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run([*prefix, f"{bindir}/pg_ctl", "-D", data, "-o", options, "-l", f"{workdir}/log", "-w", "-t", "60", "start"], **run)
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*prefix, f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(workdir, ignore_errors=True)


def reset_database(url: str) -> None:
    """Drop the leaderboard's tables from the database at ``url``, so each test starts empty."""
    from sqlalchemy import create_engine

    from parlour.leaderboard.store import Base

    engine = create_engine(url)
    Base.metadata.drop_all(engine)
    engine.dispose()
