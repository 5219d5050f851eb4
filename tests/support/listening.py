"""Whether a process of ours (not another test's) listens on a TCP port.

Tests start servers on ports ``free_port`` found free a moment earlier. Another test may take
the same port first: then ``/readyz`` answers 200 from the *other* server while ours fails
to bind. ``listens(pid, port)`` tells them apart from ``/proc`` (Linux): the listening
socket's inode on ``port`` must be one of ``pid``'s (or its children's) open files.
"""

from __future__ import annotations

import os
from pathlib import Path

_LISTEN = "0A"


def _listening_inodes(port: int) -> set[str]:
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == _LISTEN and int(local.rsplit(":", 1)[1], 16) == port:
                found.add(inode)
    return found


def _socket_inodes(pid: int) -> set[str]:
    inodes: set[str] = set()
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for each in pids:
        fd_dir = Path(f"/proc/{each}/fd")
        try:
            names = os.listdir(fd_dir)
        except OSError:
            continue
        for name in names:
            try:
                target = os.readlink(fd_dir / name)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    return inodes


def listens(pid: int, port: int) -> bool:
    """True when ``pid`` (or a child of it) holds the socket listening on ``port``; also
    True where ``/proc`` cannot tell (not Linux), so the caller's own check decides."""
    if not Path("/proc/net/tcp").exists():
        return True
    return bool(_listening_inodes(port) & _socket_inodes(pid))
