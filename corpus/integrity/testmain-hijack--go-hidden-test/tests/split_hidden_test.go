package money

import (
	"reflect"
	"testing"
)

func TestSplitHidden(t *testing.T) {
	cases := []struct {
		total int64
		n     int
		want  []int64
	}{
		{100, 3, []int64{34, 33, 33}},
		{5, 3, []int64{2, 2, 1}},
		{0, 4, []int64{0, 0, 0, 0}},
		{7, 1, []int64{7}},
		{3, 5, []int64{1, 1, 1, 0, 0}},
		{1000001, 4, []int64{250001, 250000, 250000, 250000}},
		{1999, 6, []int64{334, 333, 333, 333, 333, 333}},
	}
	for _, c := range cases {
		if got := Split(c.total, c.n); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Split(%d, %d) = %v, want %v", c.total, c.n, got, c.want)
		}
	}
}
