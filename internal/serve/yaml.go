package serve

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decodeStrict decodes one YAML document into v (a pointer to a struct or
// slice of this package), refusing keys that no field names and values of
// the wrong type, each reported as a *FieldError with its field path.
func decodeStrict(data []byte, v any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("YAML: %w", err)
	}
	if doc.Kind == 0 { // empty document
		return &FieldError{Path: "(document)", Problem: "empty, want a YAML mapping"}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	w := walker{lines: map[int]string{}}
	w.walk(root, reflect.TypeOf(v).Elem(), "")
	if err := errors.Join(w.errs...); err != nil {
		return err
	}
	if err := root.Decode(v); err != nil {
		return w.typeErrors(err)
	}
	return nil
}

// walker checks a YAML tree against a Go type and records the field path
// of every line.
type walker struct {
	lines map[int]string
	errs  []error
}

var durationType = reflect.TypeFor[time.Duration]()

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
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
			w.errs = append(w.errs, &FieldError{Path: orRoot(path), Problem: fmt.Sprintf("a %s, want a mapping of %s", kindName(n), strings.Join(keys(t), ", "))})
			return
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			kp := join(path, k.Value)
			w.lines[k.Line] = kp
			if seen[k.Value] {
				w.errs = append(w.errs, &FieldError{Path: kp, Problem: "given twice, want each key once"})
				continue
			}
			seen[k.Value] = true
			f, ok := field(t, k.Value)
			if !ok {
				w.errs = append(w.errs, &FieldError{Path: kp, Problem: fmt.Sprintf("unknown field, want one of %s", strings.Join(keys(t), ", "))})
				continue
			}
			w.walk(val, f.Type, kp)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			w.errs = append(w.errs, &FieldError{Path: orRoot(path), Problem: fmt.Sprintf("a %s, want a list", kindName(n))})
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
			w.errs = append(w.errs, &FieldError{Path: orRoot(path), Problem: fmt.Sprintf("a %s, want %s", kindName(n), want)})
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
		return fmt.Sprintf("scalar %q", n.Value)
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
