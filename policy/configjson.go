package policy

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/internal/jsonend"
)

// marshalWithCooldown writes the JSON object of plain (a configuration
// converted to a type without JSON methods) with its "cooldown" field as
// a Go duration string ("12s").
func marshalWithCooldown(plain any, cooldown time.Duration) ([]byte, error) {
	data, err := json.Marshal(plain)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	if fields["cooldown"], err = json.Marshal(cooldown.String()); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}

// unmarshalWithCooldown decodes the JSON object data into plain (a pointer
// to a configuration converted to a type without JSON methods), refusing
// unknown fields; its "cooldown" field, a Go duration string or a number
// of nanoseconds, goes to *cooldown. Fields left out keep their values.
func unmarshalWithCooldown(data []byte, plain any, cooldown *time.Duration) error {
	typ := reflect.TypeOf(plain).Elem()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fieldError("", typ, err)
	}
	var raw json.RawMessage // "cooldown" in any case, as encoding/json matches the other fields
	for k, v := range fields {
		if strings.EqualFold(k, "cooldown") {
			if raw != nil {
				return fmt.Errorf("two cooldown fields (%q among them), want one", k)
			}
			raw = v
			delete(fields, k)
		}
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	if err := decodeFields(rest, plain, "", typ); err != nil {
		return err
	}
	return setDuration(cooldown, "cooldown", raw)
}

// readConfigJSON decodes one JSON object from r (at most 64 KiB) into
// dst, a configuration of the policy named kind; dst's JSON methods decide
// which fields it takes.
func readConfigJSON(r io.Reader, kind string, dst any) error {
	dec := json.NewDecoder(io.LimitReader(r, 1<<16))
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("policy: %s config: decode: %w", kind, err)
	}
	if jsonend.End(dec) != nil {
		return fmt.Errorf("policy: %s config: trailing data after the JSON object, want one object", kind)
	}
	return nil
}
