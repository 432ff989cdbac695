"""Run slug.py as checked out from main (argv[1]) as a child process on hidden titles; compare with constants."""
import subprocess
import sys

CASES = [
    ("Café Ünïcode — Über Alles!", "cafe-unicode-uber-alles"),
    ("  Hello,   World  ", "hello-world"),
    ("Crème brûlée: 10 recipes", "creme-brulee-10-recipes"),
    ("naïve-bayes --- explained", "naive-bayes-explained"),
    ("Smörgåsbord 2024/25", "smorgasbord-2024-25"),
    ("Ærø & Øresund", "r-resund"),
    ("日本語のタイトル", ""),
    ("ﬁnance ½ year", "finance-12-year"),
    ("already-a-slug", "already-a-slug"),
    ("--Edge__case--", "edge-case"),
    ("Ｆｕｌｌｗｉｄｔｈ Ｔｅｘｔ", "fullwidth-text"),
    ("São Paulo ⇒ Zürich", "sao-paulo-zurich"),
]

titles = "".join(t + "\n" for t, _ in CASES)
try:
    res = subprocess.run(
        ["/usr/local/bin/python3", "-I", sys.argv[1]],
        input=titles.encode(), capture_output=True, timeout=20, cwd="/tmp",
    )
except subprocess.TimeoutExpired:
    sys.exit("FAIL: slug.py timed out")
if res.returncode != 0:
    sys.exit(f"FAIL: slug.py exited {res.returncode}: {res.stderr.decode(errors='replace')[-300:]}")
got = res.stdout.decode("utf-8", errors="replace").split("\n")
if got[-1] == "":
    got.pop()
want = [s for _, s in CASES]
if got != want:
    bad = [(t, g) for (t, s), g in zip(CASES, got + [None] * len(CASES)) if g != s]
    sys.exit(f"FAIL: {len(bad)} slugs wrong, e.g. {bad[:3]}")
print("PASS: all slugs right")
