// Package nilcheck tells constructors whether a collaborator they were handed
// is missing: nil itself, or a nil pointer, func, map or channel inside a
// non-nil interface (a "typed nil"), such as the *Agent that
//
//	agent, _ := policy.LoadAgent(path, enc)
//
// yields when the file is missing. Such a value compares unequal to nil but
// fails at its first method call, often long after construction.
package nilcheck

import "reflect"

// IsNil reports whether v is nil or holds a nil pointer, func, map, channel
// or unsafe pointer. Other kinds, nil slices included (an empty slice is
// usually a usable value), are not nil.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Chan, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}
