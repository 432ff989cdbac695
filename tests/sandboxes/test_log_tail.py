"""The bounded build-log tail (issue 46, item 4): the last bytes kept, the rest counted."""

from __future__ import annotations

import re

import pytest

from sandboxes.log_tail import NOTE_ROOM, LogTail

NOTE = re.compile(
    r"^\[envfactory: ([\d,]+) bytes \(([\d,]+) lines\) of this log were dropped;"
    r" its last ([\d,]+) bytes follow\]\n"
)


def _numbers(text: str) -> tuple[int, int, int]:
    found = NOTE.match(text)
    assert found, text[:300]
    dropped, lines, kept = (int(n.replace(",", "")) for n in found.groups())
    return dropped, lines, kept


def test_a_short_log_is_kept_whole_without_a_note() -> None:
    tail = LogTail(4096)
    for i in range(10):
        tail.append(f"line {i}\n")
    assert tail.text() == "".join(f"line {i}\n" for i in range(10))
    assert (tail.total_bytes, tail.total_lines, tail.dropped_bytes) == (70, 10, 0)


def test_a_long_log_keeps_its_last_lines_within_the_limit_and_counts_the_rest() -> None:
    tail = LogTail(4096)
    lines = [f"{i:05d} " + "x" * 93 + "\n" for i in range(1000)]  # 100 bytes each
    for line in lines:
        tail.append(line)
    text = tail.text()
    dropped, dropped_lines, kept = _numbers(text)
    body = text[NOTE.match(text).end() :]  # type: ignore[union-attr]
    assert len(text.encode()) <= 4096
    assert body == "".join(lines[-(len(body) // 100) :])  # whole lines, the last ones
    assert kept == len(body) and dropped + kept == 100_000 == tail.total_bytes
    assert dropped_lines == 1000 - len(body) // 100 and tail.total_lines == 1000
    assert tail.dropped_bytes <= dropped  # what the note says covers what memory dropped


def test_memory_holds_at_most_the_limit_whatever_is_appended() -> None:
    tail = LogTail(8192)
    for _ in range(2000):
        tail.append("y" * 3000 + "\n")
    assert tail.total_bytes - tail.dropped_bytes <= 8192 - NOTE_ROOM
    assert tail.total_bytes == 2000 * 3001 and tail.dropped_lines >= 1997


def test_a_chunk_larger_than_the_limit_keeps_its_end() -> None:
    tail = LogTail(1024)
    tail.append("a" * 5000 + "\n" + "b" * 100 + "\nend\n")
    text = tail.text()
    dropped, lines, kept = _numbers(text)
    assert text.endswith("b" * 100 + "\nend\n") and "a" not in text[NOTE.match(text).end() :]  # type: ignore[union-attr]
    assert dropped + kept == tail.total_bytes and lines == 1


def test_one_line_longer_than_the_limit_is_cut_inside_the_line() -> None:
    tail = LogTail(1024)
    tail.append("z" * 10_000)
    text = tail.text()
    dropped, lines, kept = _numbers(text)
    assert len(text.encode()) <= 1024 and kept > 0 and lines == 0
    assert dropped + kept == 10_000


def test_a_smaller_view_counts_what_it_leaves_out_too() -> None:
    tail = LogTail(1 << 20)
    for i in range(5000):
        tail.append(f"step {i:04d} " + "." * 89 + "\n")  # 100 bytes each
    small = tail.text(2048)
    dropped, lines, kept = _numbers(small)
    assert len(small.encode()) <= 2048 and small.endswith("step 4999 " + "." * 89 + "\n")
    assert dropped + kept == 500_000 and lines == 5000 - kept // 100
    assert tail.text() == "".join(f"step {i:04d} " + "." * 89 + "\n" for i in range(5000))


def test_multibyte_text_survives_a_cut() -> None:
    tail = LogTail(1024)
    for _ in range(100):
        tail.append("é" * 30 + "\n")
    body = tail.text()
    _numbers(body)
    assert body.splitlines()[1] == "é" * 30


def test_a_limit_too_small_for_its_note_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 400 bytes"):
        LogTail(100)
