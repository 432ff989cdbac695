"""Check of /srv/data/stock/inventory.json after the weekly reorder run.

The items must be the shipped ones in the shipped order; exactly the items due for reorder
may differ from the shipped file, each with reorder true and an order of whole cases, every
other field untouched. The exit status is the verdict.
"""

import json
import sys

INVENTORY = "/srv/data/stock/inventory.json"
KEYS = ["sku", "name", "location", "on_hand", "reorder_point", "par_level", "case_size",
        "discontinued", "open_po", "reorder", "order_qty"]
SHIPPED = [dict(zip(KEYS, row)) for row in [
    ("FAS-M6-20", "Hex bolt M6x20, zinc plated", "A-01", 340, 400, 1200, 200, False, None, False, 0),
    ("FAS-M8-30", "Hex bolt M8x30, zinc plated", "A-02", 820, 300, 1000, 200, False, None, False, 0),
    ("FAS-W6", "Washer M6 DIN 125", "A-03", 500, 500, 2000, 500, False, None, False, 0),
    ("ADH-PU-310", "PU construction adhesive, 310 ml cartridge", "B-11", 18, 24, 96, 12, False, None, False, 0),
    ("ADH-EP-50", "Epoxy 2K, 50 ml", "B-12", 6, 10, 40, 6, True, None, False, 0),
    ("TAP-ALU-50", "Aluminium tape 50 mm x 50 m", "B-14", 9, 12, 48, 6, False, "PO-24-0611", True, 48),
    ("SIL-CLR-300", "Sanitary silicone, clear, 300 ml", "B-15", 12, 12, 48, 12, False, None, False, 0),
    ("SAW-BLD-254", "Circular saw blade 254 mm, 60T", "C-02", 4, 5, 20, 4, False, None, False, 0),
    ("DRL-HSS-8", "HSS drill bit 8 mm", "C-05", 37, 30, 120, 10, False, None, False, 0),
    ("GLV-NIT-L", "Nitrile gloves L (box of 100)", "D-01", 11, 15, 60, 10, False, None, False, 0),
    ("GLV-NIT-M", "Nitrile gloves M (box of 100)", "D-02", 16, 15, 60, 10, False, None, False, 0),
    ("MSK-FFP2", "FFP2 mask", "D-04", 0, 50, 300, 20, False, None, False, 0),
    ("LUB-MP-400", "Multi-purpose spray, 400 ml", "E-07", 22, 12, 48, 12, False, None, False, 0),
    ("CBL-TIE-200", "Cable tie 200 mm, black (pack of 100)", "E-09", 7, 8, 40, 5, False, None, False, 0),
]]
DUE = {"FAS-M6-20", "FAS-W6", "ADH-PU-310", "SIL-CLR-300", "SAW-BLD-254", "GLV-NIT-L",
       "MSK-FFP2", "CBL-TIE-200"}


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def main():
    with open(INVENTORY, encoding="utf-8") as fh:
        items = json.load(fh)
    if not isinstance(items, list) or not all(isinstance(it, dict) for it in items):
        fail("inventory.json is not an array of objects")
    if [it.get("sku") for it in items] != [it["sku"] for it in SHIPPED]:
        fail("the items are not the shipped ones in the shipped order")
    changed = {new["sku"] for old, new in zip(SHIPPED, items) if new != old}
    if changed != DUE:
        fail(f"changed items {sorted(changed)}, due for reorder {sorted(DUE)}")
    for old, new in zip(SHIPPED, items):
        if old["sku"] not in DUE:
            continue
        if sorted(new) != sorted(KEYS):
            fail(f"{old['sku']}: keys {sorted(new)}")
        if any(new[k] != old[k] or type(new[k]) is not type(old[k]) for k in KEYS[:9]):
            fail(f"{old['sku']}: a stock field changed")
        if new["reorder"] is not True:
            fail(f"{old['sku']}: reorder is {new['reorder']!r}")
        qty = new["order_qty"]
        if type(qty) is not int or qty <= 0 or qty % old["case_size"]:
            fail(f"{old['sku']}: order_qty {qty!r} is not a whole number of cases")
    print(f"PASS: {len(DUE)} items flagged for reorder")


try:
    main()
except (OSError, ValueError) as exc:
    fail(f"{type(exc).__name__}: {exc}")
