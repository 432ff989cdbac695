"""Repositories the tests make with `git init`: fix commits in Python and Go, a commit
without a test change, an unbuildable commit, a fix one of whose hunks no test reads, and
later history (a branch and a tag) that holds the fix's blobs."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

CALC_V0 = '''"""A small calculator."""


def add(a, b):
    return a + b


def sub(a, b):
    return b - a


def clamp(x, lo, hi):
    return max(lo, x)


def mul(a, b):
    return a * b


def div(a, b):
    return a / b


def mod(a, b):
    return a % b


def describe(x):
    """Text for a number: its sign."""
    return "positive" if x > 0 else "not positive"
'''

TEST_V0 = """from calc import add, describe


def test_add():
    assert add(2, 3) == 5


def test_describe():
    assert describe(5) == "positive"
"""


@dataclass
class MadeRepo:
    path: Path
    commits: dict[str, str] = field(default_factory=dict)  # label → sha

    def git(self, *args: str) -> str:
        out = subprocess.run(
            ["git", "-C", str(self.path), *args], check=True, capture_output=True, text=True
        )
        return out.stdout.strip()

    def write(self, rel: str, text: str) -> None:
        (self.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.path / rel).write_text(text)

    def commit(self, label: str, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        self.commits[label] = self.git("rev-parse", "HEAD")
        return self.commits[label]

    def blob(self, label: str, rel: str) -> str:
        return self.git("rev-parse", f"{self.commits[label]}:{rel}")


def init_repo(path: Path) -> MadeRepo:
    path.mkdir(parents=True)
    repo = MadeRepo(path)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "user.name", "Ada Tester")
    repo.git("config", "user.email", "ada@example.com")
    return repo


def python_repo(path: Path) -> MadeRepo:
    """root → sub-fix → docs → clamp-fix (one hunk untested) → bad-req → after-bad-req."""
    r = init_repo(path)
    r.write("calc.py", CALC_V0)
    r.write("tests/test_calc.py", TEST_V0)
    r.write("README.md", "calc\n")
    r.commit("root", "calc: add and sub")
    r.write("calc.py", CALC_V0.replace("return b - a", "return a - b"))
    r.write("tests/test_calc.py", TEST_V0.replace("import add,", "import add, sub,")
            + "\n\ndef test_sub():\n    assert sub(5, 3) == 2\n")  # fmt: skip
    r.commit("sub-fix", "Fix sub: it subtracted the wrong way round\n\nsub(5, 3) gave -2.")
    r.write("README.md", "calc: a small calculator\n")
    r.commit("docs", "docs: say what calc is")
    text = (path / "calc.py").read_text()
    text = text.replace("return max(lo, x)", "return min(hi, max(lo, x))")
    text = text.replace('"not positive"', '"negative" if x < 0 else "zero"')
    r.write("calc.py", text)
    tests = (path / "tests/test_calc.py").read_text().replace("add, sub,", "add, clamp, sub,")
    r.write("tests/test_calc.py", tests + "\n\ndef test_clamp():\n    assert clamp(9, 0, 5) == 5\n")
    r.commit("clamp-fix", "Fix clamp's upper bound; describe zero and negatives apart")
    r.git("tag", "v1")
    r.git("branch", "later")
    r.write("requirements.txt", "envfactory-no-such-package-for-tests==9.9.9\n")
    r.commit("bad-req", "Depend on a package that does not exist")
    r.write("calc.py", (path / "calc.py").read_text() + "\n\ndef neg(x):\n    return -x\n")
    r.write(
        "tests/test_neg.py", "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n"
    )
    r.commit("after-bad-req", "Add neg")
    return r


GO_V0 = """package mathx

// Abs is the absolute value of x.
func Abs(x int) int {
	return x
}

// Max is the larger of a and b.
func Max(a, b int) int {
	if a > b {
		return a
	}
	return b
}
"""


def go_repo(path: Path) -> MadeRepo:
    """root → abs-fix (a Go fix with its test)."""
    r = init_repo(path)
    r.write("go.mod", "module example.com/m\n\ngo 1.19\n")
    r.write("mathx/mathx.go", GO_V0)
    r.write(
        "mathx/mathx_test.go",
        'package mathx\n\nimport "testing"\n\nfunc TestMax(t *testing.T) {\n\tif Max(1, 2) != 2 {\n\t\tt.Fatal("max")\n\t}\n}\n',
    )
    r.commit("root", "mathx: Abs and Max")
    r.write(
        "mathx/mathx.go",
        GO_V0.replace("\treturn x\n}", "\tif x < 0 {\n\t\treturn -x\n\t}\n\treturn x\n}"),
    )
    r.write(
        "mathx/mathx_test.go",
        (path / "mathx/mathx_test.go").read_text()
        + '\nfunc TestAbs(t *testing.T) {\n\tif Abs(-3) != 3 {\n\t\tt.Fatal("abs")\n\t}\n}\n',
    )
    r.commit("abs-fix", "Fix Abs for negative numbers")
    return r


def many_commits_repo(path: Path, fixes: int, coverage: int) -> MadeRepo:
    """root, then `fixes` fix commits (`fix-i`: a wrong function made right, with the test
    that shows it) and `coverage` commits (`cover-j`: a test of a function that was right
    already, and a comment in calc.py: no fail-to-pass), interleaved."""
    r = init_repo(path)
    funcs = [f"def f{i}(x):\n    return x + {i + 1}  # wrong\n" for i in range(fixes)]
    r.write("calc.py", CALC_V0 + "\n\n" + "\n\n".join(funcs))
    r.write("tests/test_calc.py", TEST_V0)
    r.commit("root", "calc with a few wrong functions")
    order = [("cover", j) for j in range(coverage)]
    for i in range(fixes):  # spread through the history
        order.insert((i + 1) * (coverage + i) // (fixes + 1), ("fix", i))
    for kind, i in order:
        text = (path / "calc.py").read_text()
        if kind == "fix":
            r.write("calc.py", text.replace(f"return x + {i + 1}  # wrong", f"return x + {i}"))
            r.write(f"tests/test_f{i}.py",
                    f"from calc import f{i}\n\n\ndef test_f{i}():\n    assert f{i}(1) == {i + 1}\n")  # fmt: skip
        else:
            r.write("calc.py", text + f"\n# checked by tests/test_add_{i}.py\n")
            r.write(f"tests/test_add_{i}.py",
                    f"from calc import add\n\n\ndef test_add_{i}():\n    assert add({i}, 1) == {i + 1}\n")  # fmt: skip
        r.commit(f"{kind}-{i}", f"{'Fix' if kind == 'fix' else 'Test'} {kind} {i}")
    return r
