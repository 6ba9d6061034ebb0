package trace

import "io"

// ReadLimited is Read with the bounds steps and bytes in place of MaxSteps
// and MaxReadBytes, so that a test reaches them with a small trace.
func ReadLimited(r io.Reader, steps int, bytes int64) (*Episode, error) {
	tr, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	return readAll(tr, readLimits{steps: steps, bytes: bytes})
}
