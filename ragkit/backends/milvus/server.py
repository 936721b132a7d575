"""Embedded Milvus as a local server process: :func:`start_local` and the :class:`LocalMilvus` it returns.

milvus-lite 2.5 ships the real Milvus C++ core as a ``milvus`` binary; :func:`start_local`
runs it on a loopback port (its data and log in one folder) and returns once the port
accepts connections. The server is stopped by its pid (:meth:`LocalMilvus.stop`, or by
leaving the ``with`` block), so tests, notebooks and the benches never leave one behind.

Example:
    >>> with start_local("/tmp/milvus") as server:        # doctest: +SKIP
    ...     print(server.uri)
    http://127.0.0.1:...
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from ragkit.core.errors import IndexStateError

__all__ = ["LocalMilvus", "start_local"]


class LocalMilvus:
    """A milvus-lite server process on loopback: ``.uri``, ``.pid``, ``.stop()``; a context manager."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, data_dir: Path, log: Path) -> None:
        self._process = process
        self.port = port
        self.data_dir = data_dir
        self.log = log
        self.uri = f"http://127.0.0.1:{port}"
        self.pid = process.pid

    def alive(self) -> bool:
        """Whether the server process is still running."""
        return self._process.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server by its pid (SIGTERM, then SIGKILL after ``timeout`` seconds)."""
        if self._process.poll() is not None:
            return
        os.kill(self.pid, signal.SIGTERM)
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.pid, signal.SIGKILL)
            self._process.wait(10)

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Return once the server answers a gRPC call (listing collections), not only accepts
        connections; a loaded machine can take seconds between the two.

        Raises:
            IndexStateError: it exited, or did not answer within ``timeout`` seconds (names its log).
        """
        from pymilvus import MilvusClient

        deadline = time.monotonic() + timeout
        problem = "no answer"
        while time.monotonic() < deadline:
            if not self.alive():
                code = self._process.returncode
                raise IndexStateError(f"milvus-lite exited with code {code}; see {self.log}")
            try:
                client = MilvusClient(uri=self.uri, timeout=max(1.0, min(10.0, deadline - time.monotonic())),
                                      grpc_options={"grpc.keepalive_permit_without_calls": 0})
                try:
                    client.list_collections()
                    return
                finally:
                    client.close()
            except Exception as exc:  # noqa: BLE001 - pymilvus raises its own and gRPC errors while starting
                problem = f"{type(exc).__name__}: {exc}"
                time.sleep(0.5)
        raise IndexStateError(f"milvus-lite on {self.uri} accepted connections but did not answer within "
                              f"{timeout:.0f} s ({problem}); see {self.log}")

    def __enter__(self) -> LocalMilvus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalMilvus(uri={self.uri!r}, pid={self.pid}, alive={self.alive()})"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_local(data_dir: str | Path, port: int | None = None, *, timeout: float = 60.0) -> LocalMilvus:
    """Start embedded Milvus (milvus-lite 2.5's ``milvus`` binary) on ``127.0.0.1:port``.

    The server stores its data in ``data_dir/milvus.db`` and logs to ``data_dir/milvus.log``;
    ``port=None`` picks a free one. Returns once the port accepts connections.

    Raises:
        IndexStateError: milvus-lite is not installed (``pip install 'ragkit[scale]'``), its
            binary is missing, or the server exits or does not listen within ``timeout``.
    """
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec("milvus_lite")  # located, not imported (its __init__ needs setuptools)
    if spec is None or not spec.submodule_search_locations:
        raise IndexStateError("milvus-lite is not installed; pip install 'ragkit[scale]' (milvus-lite 2.5.x)")
    lib = Path(list(spec.submodule_search_locations)[0]) / "lib"
    binary = lib / "milvus"
    if not binary.is_file():
        raise IndexStateError(f"{binary} is missing: milvus-lite {importlib.metadata.version('milvus-lite')} "
                              "has no server binary; install milvus-lite 2.5.x (the C++ core)")
    folder = Path(data_dir).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    port = port or _free_port()
    log = folder / "milvus.log"
    env = {**os.environ, "LD_LIBRARY_PATH": f"{lib}:{os.environ.get('LD_LIBRARY_PATH', '')}"}
    with open(log, "ab") as fh:
        process = subprocess.Popen([str(binary), str(folder / "milvus.db"), f"127.0.0.1:{port}", "ERROR"],
                                   cwd=folder, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    server = LocalMilvus(process, port, folder, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise IndexStateError(f"milvus-lite exited with code {process.returncode} at start; see {log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.1)
    server.stop()
    raise IndexStateError(f"milvus-lite did not listen on 127.0.0.1:{port} within {timeout:.0f} s; see {log}")
