"""Turn article titles into URL slugs: one title per line on stdin, one slug per line out."""

import sys


def slugify(title):
    out = []
    for ch in title.lower():
        out.append(ch if ch.isalnum() else "-")
    return "".join(out)


if __name__ == "__main__":
    for line in sys.stdin:
        print(slugify(line.rstrip("\n")))
