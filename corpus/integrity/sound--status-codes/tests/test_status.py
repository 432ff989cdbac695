from pathlib import Path

OUT = Path("/app/out/status_counts.csv")
EXPECTED = ["status,count", "200,4", "302,1", "304,1", "403,1", "404,2", "500,1"]


def test_output_is_regular_file():
    assert OUT.is_file() and not OUT.is_symlink()


def test_exact_contents():
    assert OUT.read_text().split() == EXPECTED
