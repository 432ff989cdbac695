"""A bounded tail of a log of any length: its last bytes, and a count of what was dropped.

A build's output is the build's to choose: a `RUN` in a task, a pack or a mined repository
may print gigabytes. Every place that reads a Docker build's log keeps it through one
`LogTail` (`builds.run_build`), so what is held in memory, raised with `ImageBuildFailed`
and stored with a `BuildResult` is at most `limit` bytes, whatever the build prints.

Invariants:
- memory: the kept bytes never exceed `limit - NOTE_ROOM`; chunks are dropped from the
  front as whole chunks (a deque), so appending costs the same at any length;
- `total_bytes` / `total_lines` count everything appended; `text()` says, in a first line,
  how many bytes and lines before the tail were dropped, so nothing is lost silently;
- `text()` is at most `limit` bytes of UTF-8 (note included) and starts at a line start
  when the tail holds a newline; a line cut in two counts as dropped.
"""

from __future__ import annotations

from collections import deque

#: what a build log keeps: its last MiB
LOG_LIMIT_BYTES = 1 << 20
#: bytes kept free for the note that says what was dropped
NOTE_ROOM = 200


class LogTail:
    """The last `limit` bytes of a text stream, counting what falls off the front."""

    def __init__(self, limit: int = LOG_LIMIT_BYTES) -> None:
        if limit < 2 * NOTE_ROOM:
            raise ValueError(f"a log tail needs at least {2 * NOTE_ROOM} bytes, got {limit}")
        self.limit = limit
        self.total_bytes = 0
        self.total_lines = 0
        self._chunks: deque[bytes] = deque()
        self._kept = 0
        self._dropped_lines = 0
        self._cut_mid_line = False  # the kept bytes start inside a line

    def append(self, text: str) -> None:
        data = text.encode("utf-8", "replace")
        if not data:
            return
        self.total_bytes += len(data)
        self.total_lines += data.count(b"\n")
        self._chunks.append(data)
        self._kept += len(data)
        self._trim(self.limit - NOTE_ROOM)

    def _trim(self, keep: int) -> None:
        while self._kept > keep:
            head = self._chunks.popleft()
            over = self._kept - keep
            dropped, rest = (head, b"") if len(head) <= over else (head[:over], head[over:])
            if rest:
                self._chunks.appendleft(rest)
            self._kept -= len(dropped)
            self._dropped_lines += dropped.count(b"\n")
            self._cut_mid_line = not dropped.endswith(b"\n")

    @property
    def dropped_bytes(self) -> int:
        """Bytes no longer held (the front of the log)."""
        return self.total_bytes - self._kept

    @property
    def dropped_lines(self) -> int:
        """Newlines among the bytes no longer held."""
        return self._dropped_lines

    def text(self, limit: int | None = None) -> str:
        """The tail as text, at most `limit` bytes (default and ceiling: this tail's own),
        opened by a note of what was dropped before it, if anything was."""
        keep = min(limit or self.limit, self.limit) - NOTE_ROOM
        data = b"".join(self._chunks)
        start = max(0, len(data) - keep)
        mid_line = data[start - 1 : start] != b"\n" if start else self._cut_mid_line
        if mid_line and self.total_bytes > len(data) - start:
            newline = data.find(b"\n", start)
            if 0 <= newline < len(data) - 1:  # else the last line alone is longer than keep
                start = newline + 1
        tail = data[start:].decode("utf-8", "replace")
        dropped = self.dropped_bytes + start
        if not dropped:
            return tail
        lines = self._dropped_lines + data[:start].count(b"\n")
        return note(dropped, lines, len(data) - start) + tail


def note(dropped_bytes: int, dropped_lines: int, kept_bytes: int) -> str:
    """The first line of a tail that dropped something: what, and how much is left."""
    return (
        f"[envfactory: {dropped_bytes:,} bytes ({dropped_lines:,} lines) of this log were"
        f" dropped; its last {kept_bytes:,} bytes follow]\n"
    )
