# Build settings shared by the Makefile and the release scripts.
OUT = build
DATA = $(sort $(wildcard data/sales-*.csv))
