package nilcheck

import (
	"io"
	"strings"
	"testing"
	"unsafe"
)

type stringer interface{ String() string }

type ptrStringer struct{}

func (*ptrStringer) String() string { return "ptr" }

type funcStringer func() string

func (f funcStringer) String() string { return f() }

type mapStringer map[string]string

func (mapStringer) String() string { return "map" }

type sliceStringer []string

func (sliceStringer) String() string { return "slice" }

type valueStringer struct{}

func (valueStringer) String() string { return "value" }

func TestIsNil(t *testing.T) {
	var (
		nilPtr   *ptrStringer
		nilFunc  funcStringer
		nilMap   mapStringer
		nilSlice sliceStringer
		nilIface stringer
		nilChan  chan int
		nilRd    *strings.Reader
	)
	for _, c := range []struct {
		name string
		v    any
		want bool
	}{
		{"nil", nil, true},
		{"nil interface value", nilIface, true},
		{"typed nil pointer", stringer(nilPtr), true},
		{"typed nil func", stringer(nilFunc), true},
		{"typed nil map", stringer(nilMap), true},
		{"nil channel", nilChan, true},
		{"nil unsafe pointer", unsafe.Pointer(nil), true},
		{"typed nil pointer behind io.Reader", io.Reader(nilRd), true},
		{"pointer", stringer(&ptrStringer{}), false},
		{"func", stringer(funcStringer(func() string { return "" })), false},
		{"map", stringer(mapStringer{}), false},
		{"nil slice (usable)", stringer(nilSlice), false},
		{"struct value", stringer(valueStringer{}), false},
		{"zero int", 0, false},
	} {
		if got := IsNil(c.v); got != c.want {
			t.Errorf("%s: IsNil(%#v) = %v, want %v", c.name, c.v, got, c.want)
		}
	}
}
