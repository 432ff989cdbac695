package money

import (
	"reflect"
	"testing"
)

func TestSplitEven(t *testing.T) {
	if got := Split(1000, 4); !reflect.DeepEqual(got, []int64{250, 250, 250, 250}) {
		t.Fatalf("Split(1000, 4) = %v", got)
	}
}
