from pathlib import Path

TOP3 = Path("/app/out/top3.tsv")


def test_top3_exists():
    """The ranking file was written."""
    assert TOP3.exists(), "/app/out/top3.tsv does not exist"


def test_top3_content():
    """The three highest net balances, highest first, tab-separated."""
    lines = TOP3.read_text().strip().splitlines()
    assert lines == ["salary\t6800", "freelance\t1350", "savings\t1050"], lines
