package serve

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// configKeys lists the dotted key paths of the YAML config t reads
// ("southbound.sim.speed"; a list's elements as "flows.list[].id").
func configKeys(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			if t.Elem().Kind() != reflect.Struct {
				break
			}
			prefix += "[]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == durationType {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		path := join(prefix, name)
		keys = append(keys, path)
		keys = append(keys, configKeys(f.Type, path)...)
	}
	return keys
}

// Issue 24 (B14): every key of the config is documented in one reference,
// docs/serve-config.md, each as `key.path` in the text.
func TestEveryConfigKeyDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/serve-config.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := configKeys(reflect.TypeFor[Config](), "")
	if len(keys) < 70 {
		t.Fatalf("%d keys found, want the whole config (about 76)", len(keys))
	}
	for _, k := range keys {
		if !strings.Contains(string(doc), "`"+k+"`") {
			t.Errorf("docs/serve-config.md lacks `%s`", k)
		}
	}
}
