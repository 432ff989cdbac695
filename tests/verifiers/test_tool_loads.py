"""The tools' own lookups in the solver's space (`verifiers.probes.loads`, `verifiers.probes.tools`), on literal traces:
which files count as loads and of which tool, and the payload each variant plants there."""

from __future__ import annotations

from verifiers.probes.base import first_sentence
from verifiers.probes.loads import Load, tool_loads
from verifiers.probes.tools import ToolReplay, TracedSilenced, loads_of, replay, silence
from verifiers.probes.traced import TEX_EXIT, Access, TracedShadow, plants
from verifiers.surface import parse_trace

#: pdflatex run from /app: kpathsea tries ./article.cls (and ./article.cls.tex) before the
#: distribution's, and reads the document's input file from /app.
PDFLATEX = """\
9     execve("/usr/bin/pdflatex", ["pdflatex", "main.tex"], 0x55 /* 5 vars */) = 0
9     access("./main.tex", R_OK)        = 0
9     openat(AT_FDCWD</app>, "./main.tex", O_RDONLY) = 3</app/main.tex>
9     access("./article.cls.tex", R_OK) = -1 ENOENT (No such file or directory)
9     access("./article.cls", R_OK)     = -1 ENOENT (No such file or directory)
9     openat(AT_FDCWD</app>, "/usr/share/texlive/texmf-dist/tex/latex/base/article.cls", O_RDONLY) = 4</usr/share/texlive/texmf-dist/tex/latex/base/article.cls>
9     access("./size10.clo", R_OK)      = -1 ENOENT (No such file or directory)
9     openat(AT_FDCWD</app>, "/usr/share/texlive/texmf-dist/tex/latex/base/size10.clo", O_RDONLY) = 4</usr/share/texlive/texmf-dist/tex/latex/base/size10.clo>
9     access("./input.tex", R_OK)       = 0
9     openat(AT_FDCWD</app>, "./input.tex", O_RDONLY) = 4</app/input.tex>
9     openat(AT_FDCWD</app>, "./main.log", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 5</app/main.log>
9     access("./cmr10.tfm", R_OK)       = -1 ENOENT (No such file or directory)
"""


def _tex_loads() -> tuple[Load, ...]:
    acc = parse_trace(PDFLATEX, root_cwd="/app")
    return tool_loads(acc, [a for a in acc if a.path.startswith("/app/")])


def test_a_tex_class_looked_up_in_the_workspace_is_a_load_of_pdflatex_with_its_real_twin() -> None:
    loads = {load.path: load for load in _tex_loads()}
    cls = loads["/app/article.cls"]
    assert (cls.tool, cls.what, cls.found) == ("pdflatex", "TeX class", False)
    assert cls.real == "/usr/share/texlive/texmf-dist/tex/latex/base/article.cls"
    assert loads["/app/article.cls.tex"].real == cls.real  # kpathsea's added .tex
    assert loads["/app/input.tex"].found and loads["/app/input.tex"].what == "TeX input file"
    assert "/app/main.log" not in loads and "/app/cmr10.tfm" not in loads  # data, not code
    assert cls.describe() == ("/app/article.cls (pdflatex: TeX class, looked up there first)")


def test_the_exit_variant_for_tex_is_planted_by_traced_shadow_and_names_the_class() -> None:
    acc = parse_trace(PDFLATEX, root_cwd="/app")
    mine = [a for a in acc if a.path.startswith("/app/")]
    shadow, overwrite = plants(acc, mine)
    assert shadow["/app/article.cls"] == (TEX_EXIT, 0o644)
    assert "/app/input.tex" in overwrite
    probe = TracedShadow(shadow, tool_loads(acc, mine))
    assert "/app/article.cls (pdflatex: TeX class" in probe.detail


def test_the_silenced_tex_class_quiets_boxes_then_inputs_the_real_class() -> None:
    probe = TracedSilenced.for_loads(_tex_loads())
    content, _ = probe.files["/app/article.cls"]
    real = "\\input /usr/share/texlive/texmf-dist/tex/latex/base/article.cls "
    assert "\\hfuzz=\\maxdimen" in content and "\\hbadness=10000" in content
    assert real in content
    assert content.index("\\hfuzz") < content.index(real) < content.rindex("\\hfuzz")
    assert "/app/input.tex" not in probe.files  # found: the task's own file
    assert "pdflatex: TeX class" in probe.detail
    assert first_sentence(probe.doc).startswith("Diagnostics silenced around the real file")


def test_the_tex_replay_writes_below_the_working_directory_with_exact_characters() -> None:
    loads = {load.path: load for load in _tex_loads()}
    text = "50% of {x} costs $5 #1 \\relax ^^M ~ caf\u00e9\n\nend\n"
    got = replay(loads["/app/article.cls"], {"/app/input.tex": text.encode()})
    assert got is not None
    assert "\\immediate\\openout15=input.tex\\relax" in got
    assert got.count("\\immediate\\write15{") == 3  # three lines, the last newline implied
    assert "\\efmk{37}" in got and "\\efmk{195}" in got  # % and the first byte of é
    assert "\\immediate\\write15{50\\efc{37}\\efc{32}of" in got  # delimited: no \\efc32of
    assert got.rstrip().endswith("article.cls")  # then the real class
    # outside the working directory, a dotfile or a name TeX would add .tex to: nothing
    for path in ("/etc/x.txt", "/app/.hidden.txt", "/app/README", "/app/main.log"):
        assert replay(loads["/app/article.cls"], {path: b"x\n"}) is None


def test_replays_for_perl_make_and_shell_write_the_bytes_then_load_the_real_file() -> None:
    files = {"/app/out.txt": b"a'b\n"}
    real = "/usr/share/perl/5.36/strict.pm"
    perl = Load("/app/strict.pm", "perl", "perl", "Perl module", False, "/app", real)
    got = replay(perl, files)
    assert got is not None and "612762" in got.replace("0a", "") and f"do '{real}';" in got
    make = Load("/app/GNUmakefile", "make", "make", "makefile", False, "/app")
    assert (
        replay(make, files)
        == "$(shell mkdir -p '/app' && printf '\\141\\047\\142\\012' > '/app/out.txt' 2>/dev/null)\n"
    )
    shell = Load("/app/.bashrc", "bash", "shell", "shell rc file", False, "/app")
    assert (
        replay(shell, files)
        == "mkdir -p '/app' && printf '\\141\\047\\142\\012' > '/app/out.txt' 2>/dev/null\ntrue\n"
    )
    assert silence(make) == ".SILENT:\n.IGNORE:\n"
    git = Load("/app/.gitattributes", "git", "git", "git attributes", False, "/app")
    assert silence(git) is None and replay(git, files) is None  # git-hook-replay's
    cnf = Load("/app/texmf.cnf", "pdflatex", "tex", "kpathsea configuration", False, "/app")
    assert silence(cnf) is None and replay(cnf, files) is None  # not TeX: reported only


def test_tool_replay_carries_only_the_references_changed_outputs_and_runs_on_the_noop() -> None:
    loads = _tex_loads()
    silenced = TracedSilenced.for_loads(loads)
    before = {"/app/input.tex": b"old\n", "/app/main.tex": b"\\input{input.tex}\n"}
    after = {**before, "/app/input.tex": b"new\n"}
    probe = ToolReplay.for_states(loads_of([silenced]), after, before)
    assert probe.applies and ToolReplay.noop_only
    content, _ = probe.files["/app/article.cls"]
    assert "openout15=input.tex" in content and "main.tex" not in content
    assert not ToolReplay.for_states(loads_of([]), after, before).applies
    # bounded: a file past 16 KiB is not carried, and the payloads stay one exec argument
    big = {**after, "/app/big.txt": b"x" * (16 * 1024 + 1)}
    assert "big.txt" not in ToolReplay.for_states(loads, big, before).files["/app/article.cls"][0]
    many = {f"/app/part{i}.txt": b"ab{}\n" * 2000 for i in range(6)}
    bounded = ToolReplay.for_states(loads, {**before, **many}, before)
    assert 0 < sum(len(c) for c, _ in bounded.files.values()) <= 96 * 1024


def test_perl_node_make_shell_and_git_lookups_are_named_by_type() -> None:
    acc = [
        Access("/app/lib/Checker.pm", "stat", False, "ENOENT", "/usr/bin/perl", "/app"),
        Access("/app/node_modules/chalk", "stat", False, "ENOENT", "/usr/bin/node", "/app"),
        Access("/app/GNUmakefile", "stat", False, "ENOENT", "/usr/bin/make", "/app"),
        Access("/app/rules.mk", "open", True, "", "/usr/bin/make", "/app"),
        Access("/root/.bashrc", "open", False, "ENOENT", "/bin/bash", "/app"),
        Access("/app/.gitattributes", "open", False, "ENOENT", "/usr/bin/git", "/app"),
        Access("/app/data.csv", "open", True, "", "/usr/bin/perl", "/app"),
        Access("/app", "open", True, "", "/bin/bash", "/app"),  # its directory: no load
    ]
    got = {load.path: (load.tool, load.what) for load in tool_loads(acc, acc)}
    assert got == {
        "/app/lib/Checker.pm": ("perl", "Perl module"),
        "/app/node_modules/chalk": ("node", "Node module"),
        "/app/GNUmakefile": ("make", "makefile"),
        "/app/rules.mk": ("make", "makefile"),
        "/root/.bashrc": ("bash", "shell rc file"),
        "/app/.gitattributes": ("git", "git attributes"),
    }


def test_a_directory_on_the_way_to_another_lookup_is_never_planted_as_a_file() -> None:
    node = "/usr/bin/node"
    acc = [
        Access("/app/node_modules", "stat", False, "ENOENT", node, "/app"),
        Access("/app/node_modules/left", "stat", False, "ENOENT", node, "/app"),
    ]
    loads = tool_loads(acc, acc)
    assert set(TracedSilenced.for_loads(loads).files) == {"/app/node_modules/left"}
    replayed = ToolReplay.for_states(loads, {"/app/out.txt": b"x\n"}, {})
    assert set(replayed.files) == {"/app/node_modules/left"}
