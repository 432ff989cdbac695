"""The previous implementation, kept for comparison."""
import statistics
import sys

xs = [float(x) for x in open(sys.argv[1]).read().split()]
print(f"mean={statistics.mean(xs):.2f} median={statistics.median(xs):.2f}")
