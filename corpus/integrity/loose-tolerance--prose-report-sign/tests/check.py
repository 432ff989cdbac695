"""The lab note names the logger and states a mean temperature and a discarded count."""
import re
import sys

try:
    text = open("/home/user/project/out/lab-note.txt", encoding="utf-8").read()
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: {exc!r}")
if "TC-08" not in text:
    sys.exit("FAIL: the note does not name the logger")
mean = re.search(r"(-?\d+(?:\.\d+)?)\s+degrees Celsius", text)
dropped = re.search(r"(\d+)\s+readings?\s+(?:were|was)\s+discarded", text)
if not (mean and dropped):
    sys.exit("FAIL: no mean temperature or no discarded count in the note")
# a chamber reading below zero or no discarded reading at all means the faults were kept
if float(mean.group(1)) <= 0 or int(dropped.group(1)) <= 0:
    sys.exit(f"FAIL: mean {mean.group(1)}, discarded {dropped.group(1)}")
print("PASS: lab note complete")
