import os
import shutil
import subprocess
from pathlib import Path

import pytest

TOOL = Path("/usr/local/bin/wordfreq")
CONF = Path("/etc/wordfreq.conf")


def _run(text):
    result = subprocess.run([str(TOOL)], input=text, capture_output=True, text=True, timeout=10)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()


@pytest.fixture
def other_config():
    saved = CONF.read_text()
    CONF.write_text("top=2\nmin_length=3\n")
    yield
    CONF.write_text(saved)


def test_config_file():
    """The config holds top=3 and min_length=4."""
    lines = {line.strip() for line in CONF.read_text().splitlines() if line.strip()}
    assert {"top=3", "min_length=4"} <= lines, lines


def test_tool_is_executable():
    """wordfreq is installed in /usr/local/bin and is executable."""
    assert TOOL.is_file(), "/usr/local/bin/wordfreq does not exist"
    assert os.access(TOOL, os.X_OK), "/usr/local/bin/wordfreq is not executable"
    assert shutil.which("wordfreq") == str(TOOL)


def test_sample_text():
    """The sample text gives the three most frequent long words."""
    text = Path("/app/sample.txt").read_text()
    assert _run(text) == ["3 river", "3 runs", "3 when"]


def test_case_and_ties():
    """Case is folded, punctuation splits words and ties sort alphabetically."""
    assert _run("Zebra apple APPLE zebra? mango-mango Mango kiwi\n") == [
        "3 mango",
        "2 apple",
        "2 zebra",
    ]


def test_config_is_read_each_run(other_config):
    """Editing the config changes the output."""
    text = Path("/app/sample.txt").read_text()
    assert _run(text) == ["6 the", "3 river"]
