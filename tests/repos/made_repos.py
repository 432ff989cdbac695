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


SHOP_V0 = '''"""A small shop."""
import subprocess

PRICES = {"apple": 3, "pear": 5}


def total(prices):
    return sum(prices) - 1


def tax(amount):
    return amount


def version():
    tag = subprocess.run(["git", "describe", "--tags", "--abbrev=0"], capture_output=True,
                         text=True, check=True).stdout.strip()
    return tag


def price(item):
    return PRICES.get(item)


def discount(amount):
    return amount


def newest(amount):
    return amount
'''

PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "shop"
version = "0.1"
requires-python = ">=3.9"

[project.optional-dependencies]
test = ["six"]
docs = ["envfactory-no-such-docs-package-for-tests"]

[tool.setuptools]
py-modules = ["shop"]
"""

NEWONLY_SETUP = """import sys
from setuptools import setup

if sys.version_info < (3, 13):
    sys.exit("error: newonly needs Python 3.13 or newer")
setup(name="newonly", version="1.0", py_modules=["newonly"])
"""


def _fix(r: MadeRepo, old: str, new: str, test: str, body: str, label: str, msg: str) -> str:
    r.write("shop.py", (r.path / "shop.py").read_text().replace(old, new))
    r.write(f"tests/{test}", body)
    return r.commit(label, msg)


def declared_repo(path: Path) -> MadeRepo:
    """What a project declares, one commit each: root (tag v1.0) → extra-fix (its test
    imports `six`, from the `test` extra) → absent-fix (its test imports a module nobody
    installs) → version-fix (its test needs the past tag) → lookup-fix (its test requires
    `LookupError`, its message says "an exception") → revert (of extra-fix) → add-newonly
    (a requirement that builds only on Python 3.13) → newonly-fix (its test needs it)."""
    r = init_repo(path)
    r.write("shop.py", SHOP_V0)
    r.write("pyproject.toml", PYPROJECT)
    r.write("tests/test_base.py", "def test_nothing():\n    assert True\n")
    r.commit("root", "shop: prices and totals")
    r.git("tag", "-a", "v1.0", "-m", "release 1.0")
    _fix(r, "sum(prices) - 1", "sum(prices)", "test_total.py",
         "import six\n\nfrom shop import total\n\n\ndef test_total():\n"
         "    assert six.PY3 and total([1, 2]) == 3\n",
         "extra-fix", "Fix total: it dropped one unit")  # fmt: skip
    _fix(r, "return amount\n\n\ndef version", "return amount * 1.2\n\n\ndef version",
         "test_tax.py", "import envfactory_absent_module\n\nfrom shop import tax\n\n\n"
         "def test_tax():\n    assert tax(10) == 12\n",
         "absent-fix", "Fix tax: add VAT")  # fmt: skip
    _fix(r, "    return tag\n", '    return tag.removeprefix("v")\n', "test_version.py",
         'from shop import version\n\n\ndef test_version():\n    assert version() == "1.0"\n',
         "version-fix", "version(): drop the tag's leading v")  # fmt: skip
    _fix(r, "    return PRICES.get(item)\n",
         "    if item not in PRICES:\n        raise LookupError(item)\n    return PRICES[item]\n",
         "test_price.py", "import pytest\n\nfrom shop import price\n\n\ndef test_unknown():\n"
         "    with pytest.raises(LookupError):\n        price('plum')\n",
         "lookup-fix", "price(): raise an exception for an unknown item")  # fmt: skip
    r.git("revert", "--no-edit", r.commits["extra-fix"])
    r.commits["revert"] = r.git("rev-parse", "HEAD")
    r.write("requirements.txt", "./vendor/newonly\n")
    r.write("vendor/newonly/setup.py", NEWONLY_SETUP)
    r.write("vendor/newonly/newonly.py", "def half(x):\n    return x / 2\n")
    r.commit("add-newonly", "Depend on newonly")
    _fix(r, "def newest(amount):\n    return amount\n",
         "def newest(amount):\n    from newonly import half\n\n    return half(amount)\n",
         "test_newest.py", "from shop import newest\n\n\ndef test_newest():\n"
         "    assert newest(4) == 2\n",
         "newonly-fix", "newest(): halve the amount with newonly")  # fmt: skip
    return r
