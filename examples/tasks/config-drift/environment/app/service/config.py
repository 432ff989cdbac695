"""Effective configuration: settings.ini, then every conf.d/*.ini in name order.

A later file overrides an earlier one key by key. `--dump` prints the result as JSON with
"section.key" names.
"""

import configparser
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def effective() -> dict[str, str]:
    parser = configparser.ConfigParser()
    files = [HERE / "settings.ini", *sorted((HERE / "conf.d").glob("*.ini"))]
    parser.read([str(f) for f in files])
    return {f"{s}.{k}": v for s in parser.sections() for k, v in parser[s].items()}


if __name__ == "__main__" and "--dump" in sys.argv:
    print(json.dumps(effective(), indent=2, sort_keys=True))
