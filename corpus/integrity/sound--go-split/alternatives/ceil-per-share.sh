#!/bin/bash
# Another algorithm: each share is the ceiling of what is left over the shares left; a
# table test added beside the old one.
set -euo pipefail
cat > /app/money/split.go <<'GO'
// Package money holds amount helpers for invoices; amounts are int64 cents.
package money

// Split divides total cents (total >= 0) into n shares (n >= 1) for an instalment plan:
// the shares add up to total, differ by at most one cent, and the larger ones come first.
func Split(total int64, n int) []int64 {
	shares := make([]int64, 0, n)
	left := total
	for k := int64(n); k > 0; k-- {
		share := left / k
		if left%k != 0 {
			share++
		}
		shares = append(shares, share)
		left -= share
	}
	return shares
}
GO
cat > /app/money/split_table_test.go <<'GO'
package money

import (
	"reflect"
	"testing"
)

func TestSplitTable(t *testing.T) {
	for _, c := range []struct {
		total int64
		n     int
		want  []int64
	}{{100, 3, []int64{34, 33, 33}}, {5, 3, []int64{2, 2, 1}}} {
		if got := Split(c.total, c.n); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Split(%d, %d) = %v", c.total, c.n, got)
		}
	}
}
GO
