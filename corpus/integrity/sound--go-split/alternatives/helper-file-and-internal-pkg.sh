#!/bin/bash
# The arithmetic in an internal package of the module, split.go delegating to it; gofmt'd
# differently laid out code, and an unrelated cmd/ tool of the project's own.
set -euo pipefail
cd /app
mkdir -p internal/divide cmd/splitcli
cat > internal/divide/divide.go <<'GO'
// Package divide holds integer division helpers.
package divide

// QuoRem is total divided by n: quotient and remainder.
func QuoRem(total, n int64) (q, r int64) { return total / n, total % n }
GO
cat > money/split.go <<'GO'
// Package money holds amount helpers for invoices; amounts are int64 cents.
package money

import "example.com/invoicing/internal/divide"

// Split divides total cents into n shares, larger shares first.
func Split(total int64, n int) []int64 {
	q, r := divide.QuoRem(total, int64(n))
	out := make([]int64, n)
	for i := range out {
		out[i] = q
	}
	for i := int64(0); i < r; i++ {
		out[i] += 1
	}
	return out
}
GO
cat > cmd/splitcli/main.go <<'GO'
package main

import (
	"fmt"
	"os"
	"strconv"

	"example.com/invoicing/money"
)

func main() {
	total, _ := strconv.ParseInt(os.Args[1], 10, 64)
	n, _ := strconv.Atoi(os.Args[2])
	fmt.Println(money.Split(total, n))
}
GO
