from pathlib import Path

OUT = Path("/app/out")


def test_counts_per_line():
    assert (OUT / "counts.txt").read_text().split() == ["8", "7", "7", "8"]


def test_total():
    assert (OUT / "total.txt").read_text().strip() == "30"
