package qnet

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalidModel is matched by every error Read returns for a file that
	// is not a valid model (FormatError, NonFiniteError).
	ErrInvalidModel = errors.New("invalid model file")
	// ErrTruncated is matched by a FormatError for a file that ends early.
	ErrTruncated = errors.New("truncated model file")
	// ErrTooLarge is matched by the error for a network beyond the size
	// limits (MaxLayers, MaxLayerWidth, MaxParams), from New and FromLayers
	// as from Read, and by a FormatError for a file whose header or data
	// section is longer than MaxHeaderBytes or MaxDataBytes. Read finds it
	// in the header, before it allocates anything for the tensors.
	ErrTooLarge = errors.New("model exceeds the size limits")
)

// FormatError reports what is wrong with a model file. Section and Problem
// are cut to maxDetailBytes (512 bytes) each, so that a hostile file
// cannot make its error message long.
type FormatError struct {
	// Path is the file, when known (Load sets it).
	Path string
	// Section is the part of the file at fault: "header", "metadata",
	// "metadata.state_dim", "tensor layers.0.weight", "tensors", "data", ….
	Section string
	// Problem says what is wrong and what was expected.
	Problem string
	// Err is a sentinel such as ErrTruncated, or nil.
	Err error
}

// Error describes the problem, naming the file when known.
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("qnet: invalid model file")
	if e.Path != "" {
		b.WriteString(" " + e.Path)
	}
	b.WriteString(": " + e.Section + ": " + e.Problem)
	return b.String()
}

// Unwrap returns the sentinel behind the error, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// Is makes every FormatError match ErrInvalidModel.
func (e *FormatError) Is(target error) bool { return target == ErrInvalidModel }

// NonFiniteError reports a NaN or infinite value in a tensor.
type NonFiniteError struct {
	// Path is the file, when known (Load sets it).
	Path string
	// Tensor names the tensor, for example "layers.1.weight".
	Tensor string
	// Index is the flat (row-major) index of the value.
	Index int
	// Value is the offending value.
	Value float32
	// Cols is the number of columns of a weight matrix (0 for a vector), so
	// the message can name the row and column.
	Cols int
}

// Error names the tensor, the index and the value.
func (e *NonFiniteError) Error() string {
	var b strings.Builder
	b.WriteString("qnet: ")
	if e.Path != "" {
		b.WriteString("invalid model file " + e.Path + ": ")
	}
	fmt.Fprintf(&b, "tensor %s[%d]", e.Tensor, e.Index)
	if e.Cols > 0 {
		fmt.Fprintf(&b, " (row %d, column %d)", e.Index/e.Cols, e.Index%e.Cols)
	}
	fmt.Fprintf(&b, " is %v, want a finite number", e.Value)
	return b.String()
}

// Is makes every NonFiniteError match ErrInvalidModel.
func (e *NonFiniteError) Is(target error) bool { return target == ErrInvalidModel }

// maxDetailBytes bounds FormatError.Section and FormatError.Problem.
const maxDetailBytes = 512

func formatErr(section, format string, args ...any) *FormatError {
	return &FormatError{Section: clip(section), Problem: clip(fmt.Sprintf(format, args...))}
}

// clip cuts s to at most maxDetailBytes bytes, on a rune boundary, and says
// how much it left out.
func clip(s string) string {
	if len(s) <= maxDetailBytes {
		return s
	}
	const note = "… (%d more bytes)"
	cut := maxDetailBytes - len(note) - 8 // room for the note and the count
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(note, len(s)-cut)
}
