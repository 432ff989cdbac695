# Rebuilds the rollup from scratch and compares it with the expected totals.
# The project's config.mk says where the outputs go.
include /opt/build/config.mk

.PHONY: verify
verify:
	$(MAKE) -C /opt/build clean all
	diff -u expected.csv /opt/build/$(OUT)/totals.csv
