"""BuildKit-only Dockerfile syntax translated for the classic builder (pure: no engine)."""

from __future__ import annotations

import pytest

from envfactory.core.errors import ImageBuildFailed
from sandboxes.dockerfile_classic import HEREDOC_DIR, ClassicDockerfile, to_classic


def files(result: ClassicDockerfile) -> dict[str, str]:
    return {f.path: f.data.decode() for f in result.files}


def test_a_dockerfile_without_buildkit_syntax_comes_back_unchanged() -> None:
    text = "FROM debian:12\n# a comment\nRUN echo a \\\n  && echo b\nCOPY a /a\nWORKDIR /app\n"
    assert to_classic(text, ["a"]) == ClassicDockerfile(text)


def test_the_syntax_directive_is_dropped_and_the_rest_kept() -> None:
    out = to_classic("# syntax=docker/dockerfile:1.4\nFROM debian:12\nRUN true\n")
    assert out.text == "FROM debian:12\nRUN true\n" and not out.files


def test_a_run_heredoc_alone_becomes_a_script_the_stage_shell_sources() -> None:
    out = to_classic("FROM debian:12\nRUN <<EOF\nset -e\necho $HOME > /h\nEOF\nRUN true\n")
    path = f"{HEREDOC_DIR}/1/run"
    assert files(out) == {path: "set -e\necho $HOME > /h\n"}
    assert out.text == (
        "FROM debian:12\n"
        f"COPY {path} /tmp/{HEREDOC_DIR}-1\n"
        f"RUN trap 'rm -f /tmp/{HEREDOC_DIR}-1' EXIT; . /tmp/{HEREDOC_DIR}-1\n"
        "RUN true\n"
    )


def test_a_run_heredoc_with_a_shebang_is_run_as_an_executable() -> None:
    out = to_classic("FROM debian:12\nRUN <<EOF\n#!/usr/bin/python3\nprint(1)\nEOF\n")
    (extra,) = out.files
    assert extra.mode == 0o755 and extra.data.startswith(b"#!/usr/bin/python3")
    assert out.text.splitlines()[-1].endswith(f"EXIT; /tmp/{HEREDOC_DIR}-1")


def test_a_command_fed_by_heredocs_is_handed_to_the_shell_with_its_bodies_verbatim() -> None:
    dockerfile = (
        "FROM debian:12\n"
        "RUN cat > /usr/local/bin/x <<'EOF' && chmod +x /usr/local/bin/x \\\n"
        "    && cat > /etc/y <<-END\n"
        "#!/bin/sh\n"
        'echo "$HOME"\n'
        "EOF\n"
        "\tvalue=$PATH\n"
        "\tEND\n"
        "WORKDIR /app\n"
    )
    out = to_classic(dockerfile)
    assert files(out) == {
        f"{HEREDOC_DIR}/1/run": (
            "cat > /usr/local/bin/x <<'EOF' && chmod +x /usr/local/bin/x     && cat > /etc/y <<-END\n"
            '#!/bin/sh\necho "$HOME"\nEOF\n'
            "\tvalue=$PATH\nEND\n"
        )
    }
    assert out.text.endswith("WORKDIR /app\n")


def test_a_run_heredoc_with_dash_strips_leading_tabs_from_its_script() -> None:
    out = to_classic("FROM debian:12\nRUN <<-EOF\n\techo a\n\t\techo b\n\tEOF\n")
    assert files(out) == {f"{HEREDOC_DIR}/1/run": "echo a\necho b\n"}


@pytest.mark.parametrize(
    ("delimiter", "expected"),
    [
        ("EOF", "name=demo home=/srv/demo cost=$ 5 literal=$HOME\n"),
        ("'EOF'", "name=$APP home=${HOME_DIR} cost=$ 5 literal=\\$HOME\n"),
        ('"EOF"', "name=$APP home=${HOME_DIR} cost=$ 5 literal=\\$HOME\n"),
    ],
)
def test_a_copy_heredoc_expands_the_stage_variables_only_when_its_delimiter_is_unquoted(
    delimiter: str, expected: str
) -> None:
    dockerfile = (
        "FROM debian:12\n"
        "ARG APP=demo\n"
        'ENV HOME_DIR="/srv/demo"\n'
        f"COPY <<{delimiter} /etc/app.conf\n"
        "name=$APP home=${HOME_DIR} cost=$ 5 literal=\\$HOME\n"
        "EOF\n"
    )
    out = to_classic(dockerfile)
    assert files(out) == {f"{HEREDOC_DIR}/1/EOF": expected}
    assert f"COPY {HEREDOC_DIR}/1/EOF /etc/app.conf\n" in out.text


def test_copy_heredocs_are_named_by_their_delimiters_in_a_directory() -> None:
    out = to_classic("FROM debian:12\nCOPY <<one.txt <<two.txt /data/\nA\none.txt\nB\ntwo.txt\n")
    assert files(out) == {f"{HEREDOC_DIR}/1/one.txt": "A\n", f"{HEREDOC_DIR}/2/two.txt": "B\n"}
    assert f"COPY {HEREDOC_DIR}/1/one.txt {HEREDOC_DIR}/2/two.txt /data/\n" in out.text


def test_copy_chmod_becomes_a_chmod_of_exactly_the_copied_paths() -> None:
    context = ["run.sh", "tools/a.sh", "tools/lib/b.sh", "Dockerfile"]
    dockerfile = (
        "FROM debian:12\n"
        "COPY --chmod=755 run.sh /usr/local/bin/\n"
        "COPY --chmod=0755 --chown=1000:1000 tools/ /opt/tools/\n"
        "COPY --link --chmod=u+x run.sh /usr/local/bin\n"
    )
    out = to_classic(dockerfile, context).text.splitlines()
    assert out[1:] == [
        "COPY run.sh /usr/local/bin/",
        "RUN chmod 755 /usr/local/bin/run.sh",
        "COPY --chown=1000:1000 tools/ /opt/tools/",
        "RUN chmod -R 0755 /opt/tools/a.sh /opt/tools/lib",
        "COPY run.sh /usr/local/bin",
        "RUN if [ -d /usr/local/bin ]; then chmod u+x /usr/local/bin/run.sh; "
        "else chmod u+x /usr/local/bin; fi",
    ]


def test_copy_chmod_after_another_user_runs_as_root_and_gives_the_user_back() -> None:
    out = to_classic("FROM debian:12\nUSER app\nCOPY --chmod=700 a /home/app/a\n", ["a"])
    assert out.text.splitlines()[2:] == [
        "COPY a /home/app/a",
        "USER root",
        "RUN if [ -d /home/app/a ]; then chmod 700 /home/app/a/a; else chmod 700 /home/app/a; fi",
        "USER app",
    ]


def test_cache_mounts_are_dropped_and_other_mounts_refused_with_the_line() -> None:
    out = to_classic("FROM debian:12\nRUN --mount=type=cache,target=/root/.cache pip install x\n")
    assert out.text == "FROM debian:12\nRUN pip install x\n"
    with pytest.raises(ImageBuildFailed, match=r"Dockerfile line 3: RUN --mount=type=secret"):
        to_classic("FROM debian:12\n\nRUN --mount=type=secret,id=k cat /run/secrets/k\n")


@pytest.mark.parametrize(
    ("dockerfile", "problem"),
    [
        ("FROM d\nRUN cat > f <<EOF\nnever closed\n", r"line 2: the heredoc <<EOF is never closed"),
        ("FROM d\nCOPY <<EOF /f\n$UNSET\nEOF\n", r"line 2: .*expands \$UNSET, which this"),
        ("FROM d\nCOPY <<EOF /f\n$(date)\nEOF\n", r"line 2: .*uses `\$\(`"),
        ("FROM d\nCOPY --parents a/b /x/\n", r"line 2: COPY --parents needs BuildKit"),
        ("FROM d\nCOPY --chmod=rwx a /x\n", r"line 2: --chmod=rwx is not a file mode"),
        ("FROM d\nRUN cat <<EOF>f\nx\nEOF\n", r"line 2: cannot read the heredoc"),
    ],
)
def test_what_cannot_be_translated_is_refused_naming_the_line(
    dockerfile: str, problem: str
) -> None:
    with pytest.raises(ImageBuildFailed, match=problem) as err:
        to_classic(dockerfile, ["a/b", "a"], where="environment/Dockerfile")
    assert str(err.value).startswith("environment/Dockerfile line ")
    assert err.value.hint


def test_heredoc_words_inside_quotes_or_exec_form_are_left_alone() -> None:
    text = (
        'FROM d\nRUN echo \'<<EOF\' "a <<b"\nRUN ["sh", "-c", "cat <<EOF"]\nRUN echo $((1 << 3))\n'
    )
    assert to_classic(text) == ClassicDockerfile(text)
