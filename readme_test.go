package proflow_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestREADMEEmbeddingIsExample checks that the code under the README's
// "Using it in your controller" is the body of Example_embedding, so the
// README shows code that compiles and runs.
func TestREADMEEmbeddingIsExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	section, ok := between(string(readme), "## Using it in your controller\n", "\n## ")
	if !ok {
		t.Fatal(`README.md has no section "## Using it in your controller"`)
	}
	snippet, ok := between(section, "```go\n", "```\n")
	if !ok {
		t.Fatal("the README's section Using it in your controller has no ```go block")
	}
	body, ok := between(string(src), "func Example_embedding() {\n", "\t// Output:\n")
	if !ok {
		t.Fatal("example_test.go has no Example_embedding with an Output comment")
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "\t")
	}
	if diff := cmp.Diff(lines, strings.Split(strings.TrimSuffix(snippet, "\n"), "\n")); diff != "" {
		t.Errorf("README snippet differs from Example_embedding's body (-example +README):\n%s", diff)
	}
}

// between returns the text of s after the first begin and before the next end.
func between(s, begin, end string) (string, bool) {
	_, after, ok := strings.Cut(s, begin)
	if !ok {
		return "", false
	}
	inner, _, ok := strings.Cut(after, end)
	return inner, ok
}
