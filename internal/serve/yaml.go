package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// decodeStrict decodes one YAML document into v (a pointer to a struct or
// slice of this package), refusing keys that no field names and values of
// the wrong type, each reported as a *FieldError with its field path.
//
// It refuses what is not one YAML document of text: binary data, a second
// document after "---". The check follows aliases, within a budget of
// node visits proportional to the document's own size (walkBudget), so a
// small file of nested aliases is refused quickly instead of expanded.
func decodeStrict(data []byte, v any) error {
	if i := bytes.IndexByte(data, 0); i >= 0 || !utf8.Valid(data) {
		if i < 0 {
			i = invalidUTF8(data)
		}
		return &FieldError{Path: "(document)", Problem: fmt.Sprintf("binary data (a NUL byte or invalid UTF-8 at byte %d), want YAML text", i)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("YAML: %w", err)
	}
	if doc.Kind == 0 || (doc.Kind == yaml.DocumentNode && len(doc.Content) == 0) { // empty document
		return &FieldError{Path: "(document)", Problem: "empty, want a YAML mapping"}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return fmt.Errorf("YAML: after the first document: %w", err)
	case next.Kind != 0 && !(next.Kind == yaml.DocumentNode && len(next.Content) == 0):
		return &FieldError{Path: "(document)", Problem: "a second YAML document after ---, want one document"}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	w := walker{lines: map[int]string{}, budget: walkBudget(countNodes(root))}
	w.walk(root, reflect.TypeOf(v).Elem(), "")
	if w.budget < 0 {
		return &FieldError{Path: "(document)", Problem: fmt.Sprintf("its aliases expand to more than %d nodes, want a config without excessive aliasing", walkBudget(countNodes(root)))}
	}
	if err := errors.Join(w.errs...); err != nil {
		return err
	}
	if err := root.Decode(v); err != nil {
		return w.typeErrors(err)
	}
	return nil
}

// walkBudget is the number of node visits the field-path check may make
// in a document of n nodes (aliases counted once): every node visited ten
// times over through aliases, and 100,000 visits besides.
func walkBudget(n int) int { return 10*n + 100_000 }

// maxFieldErrors bounds the errors one document reports.
const maxFieldErrors = 100

// countNodes counts the nodes of a tree without following aliases.
func countNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

// invalidUTF8 returns the offset of data's first invalid UTF-8 sequence.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// walker checks a YAML tree against a Go type and records the field path
// of every line. budget is the node visits left; below zero the walk
// stops.
type walker struct {
	lines  map[int]string
	errs   []error
	budget int
}

// fail records a problem, up to maxFieldErrors of them.
func (w *walker) fail(path, problem string) {
	switch {
	case len(w.errs) < maxFieldErrors:
		w.errs = append(w.errs, &FieldError{Path: path, Problem: problem})
	case len(w.errs) == maxFieldErrors:
		w.errs = append(w.errs, fmt.Errorf("more than %d problems; the rest are not listed", maxFieldErrors))
	}
}

var durationType = reflect.TypeFor[time.Duration]()

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	if w.budget--; w.budget < 0 {
		return
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if _, ok := w.lines[n.Line]; !ok && path != "" {
		w.lines[n.Line] = path
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			w.fail(orRoot(path), fmt.Sprintf("a %s, want a mapping of %s", kindName(n), strings.Join(keys(t), ", ")))
			return
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			kp := join(path, k.Value)
			w.lines[k.Line] = kp
			if seen[k.Value] {
				w.fail(kp, "given twice, want each key once")
				continue
			}
			seen[k.Value] = true
			f, ok := field(t, k.Value)
			if !ok {
				w.fail(kp, fmt.Sprintf("unknown field, want one of %s", strings.Join(keys(t), ", ")))
				continue
			}
			w.walk(val, f.Type, kp)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			w.fail(orRoot(path), fmt.Sprintf("a %s, want a list", kindName(n)))
			return
		}
		for i, c := range n.Content {
			w.walk(c, t.Elem(), path+"["+strconv.Itoa(i)+"]")
		}
	default:
		if n.Kind != yaml.ScalarNode {
			want := "a " + t.Kind().String()
			if t == durationType {
				want = "a duration such as 500ms"
			}
			w.fail(orRoot(path), fmt.Sprintf("a %s, want %s", kindName(n), want))
		}
	}
}

var lineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// typeErrors turns yaml's "line N: cannot unmarshal …" into FieldErrors
// naming the field of that line.
func (w *walker) typeErrors(err error) error {
	te, ok := errors.AsType[*yaml.TypeError](err)
	if !ok {
		return fmt.Errorf("YAML: %w", err)
	}
	var errs []error
	for _, e := range te.Errors {
		m := lineRE.FindStringSubmatch(e)
		if m == nil {
			errs = append(errs, errors.New(e))
			continue
		}
		line, _ := strconv.Atoi(m[1])
		path, ok := w.lines[line]
		if !ok {
			path = "line " + m[1]
		}
		errs = append(errs, &FieldError{Path: path, Problem: m[2] + " (line " + m[1] + ")"})
	}
	return errors.Join(errs...)
}

func field(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name == key && name != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func keys(t reflect.Type) []string {
	var ks []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
			ks = append(ks, name)
		}
	}
	slices.Sort(ks)
	return ks
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 64 {
			v = v[:64] + "…"
		}
		return fmt.Sprintf("scalar %q", v)
	}
	return "node"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "(document)"
	}
	return path
}
