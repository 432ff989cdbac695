// Package money holds amount helpers for invoices; amounts are int64 cents.
package money

// Split divides total cents (total >= 0) into n shares (n >= 1) for an instalment plan.
func Split(total int64, n int) []int64 {
	shares := make([]int64, n)
	for i := range shares {
		shares[i] = total / int64(n)
	}
	return shares
}
