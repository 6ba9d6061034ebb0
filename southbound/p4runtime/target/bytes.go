package target

import (
	"fmt"
	"math/big"
)

// Bytestring rules of P4Runtime §8.4: big-endian, any length except zero,
// and the value must fit the field's width once leading zero bits are
// removed. The canonical form (what the server stores and returns, for
// read-write symmetry) is the shortest string, one byte for zero.

// significantBits returns the width of b's value without leading zero bits.
func significantBits(b []byte) int {
	for i, c := range b {
		if c != 0 {
			n := 0
			for v := c; v != 0; v >>= 1 {
				n++
			}
			return (len(b)-i-1)*8 + n
		}
	}
	return 0
}

// canonical returns the shortest encoding of b's value (a new slice).
func canonical(b []byte) []byte {
	i := 0
	for i < len(b)-1 && b[i] == 0 {
		i++
	}
	return append([]byte(nil), b[i:]...)
}

// checkBytes reports whether b is a valid bytestring for a bit<width> value.
func checkBytes(what string, b []byte, width int32) error {
	if len(b) == 0 {
		return fmt.Errorf("%s is an empty bytestring, want a big-endian value of at most %d bits", what, width)
	}
	if n := significantBits(b); width > 0 && n > int(width) {
		return fmt.Errorf("%s 0x%x needs %d bits, wider than the field's %d bits", what, b, n, width)
	}
	return nil
}

func toBig(b []byte) *big.Int { return new(big.Int).SetBytes(b) }

// toUint64 decodes a bytestring known to hold at most 64 bits.
func toUint64(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// fullMask reports whether mask has every one of width bits set.
func fullMask(mask []byte, width int32) bool {
	m := toBig(mask)
	return m.BitLen() == int(width) && m.Cmp(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(width)), big.NewInt(1))) == 0
}
