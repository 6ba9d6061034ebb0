// Package jsonend tells whether a JSON decoder has reached the end of its
// input. json.Decoder.More reports false before a closing ']' or '}' as well
// as at the end, so a reader that checks More after its one value accepts
// `{"votes": 4}]`; End does not.
package jsonend

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// End returns nil when nothing but white space follows the value dec
// decoded last, and an error saying what follows otherwise. It reads from
// dec: call it once, after the last Decode.
func End(dec *json.Decoder) error {
	tok, err := dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return fmt.Errorf("data after the JSON value: %w", err)
	default:
		return fmt.Errorf("data after the JSON value: %s", describe(tok))
	}
}

// describe names a token briefly (a long string is cut).
func describe(tok json.Token) string {
	s := fmt.Sprintf("%v", tok)
	if d, ok := tok.(json.Delim); ok {
		s = string(d)
	}
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return fmt.Sprintf("%q", s)
}
