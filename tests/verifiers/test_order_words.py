"""Whether an instruction requires its records' order, read from `ORDER_PHRASES`."""

from __future__ import annotations

import pytest

from verifiers.probes.records import order_required

ASKS_FOR_ORDER = [
    "Keep the row order of the input file.",  # issue 45: missed before
    "Write the cleaned rows to out.csv, keeping the original row order.",
    "The lines must be in the same order as in input.txt.",
    "Preserve order.",
    "preserve the order of the records",
    "Maintain the input order.",
    "Output the names sorted by last name.",
    "Sort the list alphabetically.",
    "List the files in the order they appear in the log.",
    "Print them in order of appearance.",
    "Write the scores in ascending order.",
    "Write the scores in descending order.",
    "in reverse chronological order",
    "Return the results in order.",
    "The order must not change.",
    "Row order must be preserved.",
    "Order matters.",
    "The order is significant.",
    "Do not reorder the entries.",
    "rows ordered by date, newest first",
    "one name per line, sorted, without duplicates",
    "Rank them by size, largest first.",
    "Emit the events chronologically.",
    "Lines should appear in file order.",
]

FREES_THE_ORDER = [
    "Write the names of the users, one per line.",
    "List the matching files in any order.",
    "The order does not matter.",
    "Order doesn't matter, but every id must appear.",
    "The output order is not important.",
    "Lines may come in an arbitrary order.",
    "Respect the order of operations when evaluating each expression.",
    "Estimate the order of magnitude of the error.",
    "In order to pass, the script must exit 0.",
    "Load the purchase orders into orders.db.",
    "Each order id appears in orders.csv.",
    "The result need not be sorted.",
    "Results are compared regardless of order.",
    "The comparison is order-insensitive.",
    "Write an unordered list of hosts.",
]


@pytest.mark.parametrize("instruction", ASKS_FOR_ORDER)
def test_an_instruction_that_asks_for_an_order_in_a_common_phrasing_requires_it(
    instruction: str,
) -> None:
    assert order_required(instruction)


@pytest.mark.parametrize("instruction", FREES_THE_ORDER)
def test_an_instruction_that_frees_the_order_or_means_another_order_does_not_require_it(
    instruction: str,
) -> None:
    assert not order_required(instruction)


def test_a_freeing_phrase_does_not_hide_an_order_asked_for_elsewhere() -> None:
    assert order_required("Use any tool you like. Keep the row order.")
    assert order_required("The columns may come in any order, but the rows stay sorted by id.")
