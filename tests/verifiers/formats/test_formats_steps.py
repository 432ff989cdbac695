"""Splitting solution scripts into ordered steps, and finding the final WORKDIR."""

from __future__ import annotations

import pytest

from envfactory.core.errors import InvalidTask
from verifiers.formats import split_steps
from verifiers.formats.dockerfile import final_workdir


def scripts(text: str) -> list[str]:
    return [s.script for s in split_steps(text, where="solve.sh")]


def test_step_markers_split_the_script_and_give_titles():
    text = "#!/bin/bash\n# step 1: make a\necho a > a\n\n# Step 2 - make b\necho b > b\n# step\ncat a b\n"
    steps = split_steps(text, where="solve.sh")
    assert [s.title for s in steps] == ["make a", "make b", ""]
    assert [s.script for s in steps] == ["echo a > a", "echo b > b", "cat a b"]


def test_a_preamble_before_the_first_marker_is_prepended_to_every_step():
    text = "#!/bin/bash\nset -e\ncd /app\n\n# step 1\ntouch x\n# step 2\ntouch y\n"
    assert scripts(text) == ["set -e\ncd /app\ntouch x", "set -e\ncd /app\ntouch y"]


def test_a_comment_only_preamble_is_not_prepended():
    assert scripts("# a solution for X\n# step 1\ntouch x\n") == ["touch x"]


def test_lines_that_merely_mention_steps_are_not_markers():
    text = "# steps follow\necho 1\n\n# stepping stone\necho 2\n"
    assert scripts(text) == ["# steps follow\necho 1", "# stepping stone\necho 2"]


def test_without_markers_blank_line_separated_blocks_are_the_steps():
    text = "#!/bin/bash\necho a > a\n\n\nmake\n\n# finally\n\nmake install\n"
    assert scripts(text) == ["echo a > a", "make", "# finally\nmake install"]


def test_without_markers_the_preamble_and_earlier_setup_reach_every_later_step():
    # Regression: only the first block got `set -euo pipefail`, so later steps ran on
    # after failures (and in / instead of the directory an earlier block cd'd into).
    text = (
        "#!/bin/bash\nset -euo pipefail\nexport DEBIAN_FRONTEND=noninteractive\n\n"
        "apt-get install -y jq\n\ncd /app\nN=3\nmake\n\nfalse\necho after\n"
    )
    head = "set -euo pipefail\nexport DEBIAN_FRONTEND=noninteractive\n"
    assert scripts(text) == [
        head + "apt-get install -y jq",
        head + "cd /app\nN=3\nmake",
        head + "cd /app\nN=3\nfalse\necho after",
    ]


def test_a_later_marker_step_keeps_the_directory_and_exports_of_earlier_ones():
    text = "set -e\ncd /app\n# step 1\ncd sub\nexport A=1\ntouch y\n# step 2\ntouch z\n"
    assert scripts(text)[1] == "set -e\ncd /app\ncd sub\nexport A=1\ntouch z"


def test_setup_with_side_effects_is_not_carried():
    text = "X=$(date)\ntouch a\n\ncd /tmp && rm -rf y\n\ntouch b\n"
    assert scripts(text) == ["X=$(date)\ntouch a", "cd /tmp && rm -rf y", "touch b"]


def test_a_blank_line_inside_a_here_document_does_not_split_it():
    text = "cat > f <<'EOF'\nline 1\n\nline 3\nEOF\n\necho done\n"
    assert scripts(text) == ["cat > f <<'EOF'\nline 1\n\nline 3\nEOF", "echo done"]


def test_a_blank_line_inside_an_if_block_or_function_does_not_split_it():
    text = "if true; then\n  echo a\n\n  echo b\nfi\n\nf() {\n  echo c\n\n}\n\nf\n"
    # the function definition changes nothing by itself: it is carried into the step using it
    assert scripts(text) == ["if true; then\n  echo a\n\n  echo b\nfi", "f() {\n  echo c\n}\nf"]


def test_a_script_of_one_block_yields_one_step():
    assert len(split_steps("#!/bin/bash\necho a\necho b\n", where="solve.sh")) == 1


def test_an_empty_script_is_refused():
    with pytest.raises(InvalidTask, match="solve.sh: the script has no commands"):
        split_steps("#!/bin/bash\n\n", where="solve.sh")


@pytest.mark.parametrize(
    "dockerfile,expected",
    [
        ("FROM x\n", None),
        ("FROM x\nWORKDIR /app\n", "/app"),
        ("from x\nworkdir /a\nWORKDIR b/../c\n", "/a/c"),
        ('FROM x\nWORKDIR "/quoted dir"\n', "/quoted dir"),
        ("FROM x AS one\nWORKDIR /one\nFROM y\n", None),
        ("FROM x AS one\nWORKDIR /one\nFROM one AS two\nWORKDIR deeper\nFROM two\n", "/one/deeper"),
        ("FROM --platform=linux/amd64 x\nWORKDIR \\\n  /split\n", "/split"),
    ],
)
def test_final_workdir_follows_stages_and_relative_paths(dockerfile, expected):
    assert final_workdir(dockerfile) == expected


def test_a_command_with_an_environment_prefix_is_a_step_not_setup():
    # Regression: `LC_ALL=C sort …` was read as a plain assignment, so a two-step solution
    # became one step (no prefix state) and its last command was never run.
    text = "set -e\ncd /app\n# step 1\ntr a b < x > y\n# step 2\nLC_ALL=C sort -u -o y y\n"
    assert scripts(text) == [
        "set -e\ncd /app\ntr a b < x > y",
        "set -e\ncd /app\nLC_ALL=C sort -u -o y y",
    ]
