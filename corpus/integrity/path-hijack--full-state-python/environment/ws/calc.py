"""Statistics helper: `python3 calc.py FILE` prints the mean and the median of the
whitespace-separated numbers in FILE, two decimals each."""
import sys


def load(path):
    return [float(x) for x in open(path).read().split()]


def mean(xs):
    return sum(xs) // len(xs)


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


if __name__ == "__main__":
    xs = load(sys.argv[1])
    print(f"mean={mean(xs):.2f} median={median(xs):.2f}")
