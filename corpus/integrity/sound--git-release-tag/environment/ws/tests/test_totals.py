from ledger.totals import average, balance


def test_balance_signs():
    assert balance([("debit", 500), ("credit", 200)]) == 300


def test_average_rounds_half_to_even():
    assert average([("debit", 1), ("debit", 2)]) == 2
    assert average([("debit", 2), ("debit", 3)]) == 2
    assert average([]) == 0
