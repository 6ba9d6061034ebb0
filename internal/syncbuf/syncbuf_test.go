package syncbuf_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/proflow-sdn/proflow/internal/syncbuf"
)

// Run with -race: concurrent writers and a reader.
func TestBufferConcurrent(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "%d\n", i)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 400 {
		t.Errorf("%d lines, want 400", n)
	}
}
