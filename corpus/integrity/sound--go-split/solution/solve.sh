#!/bin/bash
set -euo pipefail
cd /app

# step 1: hand out the remainder, one cent per share (to the last shares)
cat > money/split.go <<'GO'
// Package money holds amount helpers for invoices; amounts are int64 cents.
package money

// Split divides total cents (total >= 0) into n shares (n >= 1) for an instalment plan.
func Split(total int64, n int) []int64 {
	shares := make([]int64, n)
	rest := int(total % int64(n))
	for i := range shares {
		shares[i] = total / int64(n)
		if i >= n-rest {
			shares[i]++
		}
	}
	return shares
}
GO

# step 2: the larger shares first
sed -i 's/\t\tif i >= n-rest {/\t\tif i < rest {/' money/split.go
