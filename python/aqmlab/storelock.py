"""Who may write a results root, and when: the writer protocol's owners and locks.

An ``Owner`` is a process named by its host, its pid and its start time (field 22 of
``/proc/PID/stat``), so that a pid the system has given to a new process is not taken for the
old one: what a dead owner left (a temporary file, a table part its batch never committed) may
be removed, what a live one holds may not.

``locked`` holds an advisory lock (``flock``) on a lock file for a block: exclusive for a writer,
shared for a reader. The kernel drops it when the last process holding the file ends, however it
ends (kill -9 included), and a child forked while it is held holds it too: a sweep's local
workers keep their sweep locked as long as any of them lives. A lock that stays taken longer
than the wait allowed raises ``Busy``, whose message names the path and the holder. Within one
process the lock is reentrant (a rebuild of the catalog inside a catalog update).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

POLL_S = 0.05
"""Wall time between two tries of a lock held by another process."""


@dataclass(frozen=True)
class Owner:
    host: str
    pid: int
    start: int  # clock ticks after boot, /proc/PID/stat field 22; 0 where there is no /proc

    @classmethod
    def me(cls) -> Owner:
        return cls(socket.gethostname(), os.getpid(), _start_time(os.getpid()))

    @property
    def token(self) -> str:
        """The owner as it is written into file names and Parquet metadata: ``host:pid:start``."""
        return f"{self.host}:{self.pid}:{self.start}"

    @classmethod
    def parse(cls, token: str) -> Owner | None:
        host, _, rest = token.rpartition(":")
        host, _, pid = host.rpartition(":")
        if not (host and pid.isdigit() and rest.isdigit()):
            return None
        return cls(host, int(pid), int(rest))

    def alive(self) -> bool:
        """Whether this process still runs. One on another host is taken as alive: nothing here
        can tell, and what it holds is left alone."""
        if self.host != socket.gethostname():
            return True
        return _start_time(self.pid) == self.start and pid_exists(self.pid)


def _start_time(pid: int) -> int:
    """The process's start time (clock ticks since boot, /proc/PID/stat field 22); 0 when it
    is gone or a zombie (killed and not yet reaped: it writes nothing more)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = text[text.rindex(")") + 2 :].split()  # the name may hold spaces or ')'
    return 0 if fields[0] in ("Z", "X") else int(fields[19])


def pid_exists(pid: int) -> bool:
    """Whether a process ``pid`` exists (a zombie included; one of another user's too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Busy(RuntimeError):
    """A lock still held by another process when the wait allowed ran out."""


_held: dict[str, list] = {}  # lock file -> [fd, depth] in this process
_guard = threading.Lock()


@contextlib.contextmanager
def locked(path: Path, what: str, wait_s: float, shared: bool = False) -> Iterator[None]:
    """Holds the lock file ``path`` (created if missing) for the block; ``Busy`` naming ``what``
    and the holder when another process holds it longer than ``wait_s``. An exclusive holder
    writes its ``Owner`` token into the file, for that message."""
    key = str(Path(path).absolute())
    with _guard:
        mine = _held.get(key)
        if mine is not None:
            mine[1] += 1
    if mine is None:
        fd = _acquire(Path(key), what, wait_s, shared)
        with _guard:
            _held[key] = mine = [fd, 1]
    try:
        yield
    finally:
        with _guard:
            mine[1] -= 1
            done = mine[1] == 0
            if done:
                del _held[key]
        if done and mine[0] is not None:
            os.close(mine[0])  # drops the lock (this process's share of it, after a fork)


def _acquire(path: Path, what: str, wait_s: float, shared: bool) -> int | None:
    """The locked file's descriptor; None for a reader where the lock file cannot be made (a
    read-only file system, on which no writer can hold it)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        if not shared:
            raise
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise Busy(f"{what}: {_holder(path)} for more than {wait_s:g} s") from None
                time.sleep(POLL_S)
        if not shared:
            os.ftruncate(fd, 0)
            os.pwrite(fd, Owner.me().token.encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _holder(path: Path) -> str:
    """Who holds ``path``, from the token its exclusive holder wrote."""
    try:
        owner = Owner.parse(path.read_text().strip())
    except OSError:
        owner = None
    if owner is None or not owner.alive():  # held shared, by readers
        return f"in use ({path})"
    return f"in use by process {owner.pid}" + (
        f" on {owner.host}" if owner.host != socket.gethostname() else ""
    )


def wait_s(name: str, default: float) -> float:
    """The wait allowed for a lock: the environment variable ``name`` (seconds) or ``default``."""
    try:
        return max(0.0, float(os.environ[name]))
    except (KeyError, ValueError):
        return default
