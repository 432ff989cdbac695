"""A TCP proxy in front of the Docker engine's socket that can refuse service for a while.

A real local server, not a patched client: a worker pointed at it (``DOCKER_HOST=tcp://…``)
talks HTTP to the engine through it. `refuse()` closes every open connection (calls in
flight break mid-stream) and closes each new one as soon as it is accepted, until
`allow()`; `refused` counts the connections turned away.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

ENGINE_SOCKET = "/var/run/docker.sock"


class DockerProxy:
    def __init__(self, target: str = ENGINE_SOCKET) -> None:
        self.target = target
        self.refused = 0
        self.served = 0
        self._refusing = False
        self._open: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def start(self) -> DockerProxy:
        self._thread.start()
        self._server = self._call(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    def refuse(self) -> None:
        async def go() -> None:
            self._refusing = True
            for w in list(self._open):
                w.close()

        self._call(go())

    def allow(self) -> None:
        async def go() -> None:
            self._refusing = False

        self._call(go())

    def stop(self) -> None:
        async def go() -> None:
            if self._server is not None:
                self._server.close()
            for w in list(self._open):
                w.close()
            handlers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in handlers:
                t.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)

        self._call(go())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _call(self, coro):  # type: ignore[no-untyped-def]
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._refusing:
            self.refused += 1
            writer.close()
            return
        self.served += 1
        up_reader, up_writer = await asyncio.open_unix_connection(self.target)
        self._open |= {writer, up_writer}
        try:
            await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
        finally:
            self._open -= {writer, up_writer}
            for w in (writer, up_writer):
                w.close()


async def _pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
    with contextlib.suppress(ConnectionError, OSError, RuntimeError):
        if dst.can_write_eof():
            dst.write_eof()


@contextlib.contextmanager
def docker_proxy() -> Iterator[DockerProxy]:
    proxy = DockerProxy().start()
    try:
        yield proxy
    finally:
        proxy.stop()
