package zipline

import (
	"context"
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Struct hashes: a struct's fields tagged `redis:"name"` kept as a hash's
// fields, as go-redis's HSet of a struct and Scan of HGetAll do, so that a
// go-redis service ports with its types unchanged and both clients read
// each other's hashes.
//
// A field is stored when it is exported and tagged: `redis:"name"` names
// its hash field, `redis:"name,omitempty"` leaves a zero value out, and
// `redis:"-"` or no tag leaves the field out. Values are written as Do
// writes arguments: strings and []byte as they are, integers and floats in
// decimal, bools as 1 or 0, a time.Time in RFC 3339 with nanoseconds, a
// time.Duration as its nanoseconds, and an encoding.BinaryMarshaler (else
// TextMarshaler) by its bytes; a nil pointer is left out. They read back the
// same way, an encoding.BinaryUnmarshaler (else TextUnmarshaler) from its
// bytes.

// FieldMap is a hash's fields and values, as HGetAll returns them.
type FieldMap map[string][]byte

// Scan fills the tagged fields of the struct dst points to from m (see
// HSetStruct); fields m does not hold are left as they are. A value that
// does not parse as its field's type is an error naming the field.
func (m FieldMap) Scan(dst any) error {
	fields, rv, err := structFields(dst, true)
	if err != nil {
		return err
	}
	for _, f := range fields {
		if b, ok := m[f.name]; ok {
			if err := f.set(rv.FieldByIndex(f.index), b); err != nil {
				return err
			}
		}
	}
	return nil
}

// HSetStruct sets the fields of the hash at key from v, a struct or a
// pointer to one, each tagged field one hash field (see FieldMap), and
// returns how many were new. A struct with no tagged field to store, or a
// field of a type no hash value can hold, is an *ArgumentError.
//
//zipline:twins HSetStruct
func hsetStructCmd(key string, v any) (command[int64], error) {
	fields, rv, err := structFields(v, false)
	if err != nil {
		return define(decInt, specHSET), err
	}
	args := []arg{keyArg(key)}
	for _, f := range fields {
		b, ok, err := f.get(rv.FieldByIndex(f.index))
		if err != nil {
			return define(decInt, specHSET), err
		}
		if ok {
			args = append(args, str(f.name), bin(b))
		}
	}
	if len(args) == 1 {
		return define(decInt, specHSET), &ArgumentError{Command: "HSET", Reason: fmt.Sprintf(
			"%s has no tagged field to store (tag fields `redis:\"name\"`)", rv.Type())}
	}
	return define(decInt, specHSET, args...), nil
}

// HGetStruct fills the tagged fields of the struct dst points to from the
// hash at key (HMGET of those fields: see FieldMap), and returns Nil if the
// hash holds none of them.
func (c *Client) HGetStruct(ctx context.Context, key string, dst any) error {
	fields, rv, err := structFields(dst, true)
	if err != nil {
		return err
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	vs, err := c.HMGet(ctx, key, names...)
	if err != nil {
		return err
	}
	found := false
	for i, f := range fields {
		if i < len(vs) && vs[i] != nil {
			found = true
			if err := f.set(rv.FieldByIndex(f.index), vs[i]); err != nil {
				return err
			}
		}
	}
	if !found {
		return Nil
	}
	return nil
}

// structField is one tagged field of a struct.
type structField struct {
	name      string
	index     []int
	omitEmpty bool
}

// structFields returns the tagged fields of v's struct type and the struct
// itself (addressable when toFill, for which v must be a non-nil pointer).
func structFields(v any, toFill bool) ([]structField, reflect.Value, error) {
	rv := reflect.ValueOf(v)
	switch {
	case rv.Kind() == reflect.Pointer && !rv.IsNil():
		rv = rv.Elem()
	case toFill:
		return nil, rv, &ArgumentError{Command: "HGETALL", Reason: fmt.Sprintf("Scan needs a non-nil pointer to a struct, not %T", v)}
	}
	if rv.Kind() != reflect.Struct {
		return nil, rv, &ArgumentError{Command: "HSET", Reason: fmt.Sprintf("want a struct, not %T", v)}
	}
	var out []structField
	for _, f := range reflect.VisibleFields(rv.Type()) {
		tag, ok := f.Tag.Lookup("redis")
		if !ok || tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			continue
		}
		out = append(out, structField{name: name, index: f.Index, omitEmpty: opts == "omitempty"})
	}
	return out, rv, nil
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()
)

// get returns the bytes a field is stored as, and whether it is stored at
// all (a nil pointer, or an empty value with omitempty, is not).
func (f structField) get(v reflect.Value) ([]byte, bool, error) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, false, nil
		}
		v = v.Elem()
	}
	if f.omitEmpty && v.IsZero() {
		return nil, false, nil
	}
	if v.CanInterface() {
		switch x := v.Interface().(type) {
		case time.Time:
			return x.AppendFormat(nil, time.RFC3339Nano), true, nil
		case time.Duration:
			return strconv.AppendInt(nil, int64(x), 10), true, nil
		case encoding.BinaryMarshaler:
			b, err := x.MarshalBinary()
			return b, err == nil, f.wrap(err)
		case encoding.TextMarshaler:
			b, err := x.MarshalText()
			return b, err == nil, f.wrap(err)
		}
	}
	switch v.Kind() {
	case reflect.String:
		return []byte(v.String()), true, nil
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Bytes(), true, nil
		}
	case reflect.Bool:
		if v.Bool() {
			return []byte("1"), true, nil
		}
		return []byte("0"), true, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(nil, v.Int(), 10), true, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(nil, v.Uint(), 10), true, nil
	case reflect.Float32, reflect.Float64:
		return strconv.AppendFloat(nil, v.Float(), 'f', -1, v.Type().Bits()), true, nil
	}
	return nil, false, &ArgumentError{Command: "HSET", Reason: fmt.Sprintf("field %q: a %s is not a hash value", f.name, v.Type())}
}

// set parses b into the field v.
func (f structField) set(v reflect.Value, b []byte) error {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	switch v.Type() {
	case timeType:
		t, err := time.Parse(time.RFC3339Nano, string(b))
		if err != nil {
			return f.parseError(b, v)
		}
		v.Set(reflect.ValueOf(t))
		return nil
	case durationType:
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return f.parseError(b, v)
		}
		v.SetInt(n)
		return nil
	}
	if v.CanAddr() {
		switch u := v.Addr().Interface().(type) {
		case encoding.BinaryUnmarshaler:
			return f.wrap(u.UnmarshalBinary(b))
		case encoding.TextUnmarshaler:
			return f.wrap(u.UnmarshalText(b))
		}
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(string(b))
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			return f.typeError(v)
		}
		v.SetBytes(append([]byte(nil), b...))
	case reflect.Bool:
		x, err := strconv.ParseBool(string(b))
		if err != nil {
			return f.parseError(b, v)
		}
		v.SetBool(x)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(b), 10, v.Type().Bits())
		if err != nil {
			return f.parseError(b, v)
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(string(b), 10, v.Type().Bits())
		if err != nil {
			return f.parseError(b, v)
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		x, err := strconv.ParseFloat(string(b), v.Type().Bits())
		if err != nil {
			return f.parseError(b, v)
		}
		v.SetFloat(x)
	default:
		return f.typeError(v)
	}
	return nil
}

// parseError says a stored value does not parse as its field's type,
// giving its size, never its bytes (a stored value may be private, and
// the parsers' errors quote it).
func (f structField) parseError(b []byte, v reflect.Value) error {
	return &TypeError{Want: "field " + strconv.Quote(f.name), Got: fmt.Sprintf("%d bytes that do not parse as a %s", len(b), v.Type())}
}

func (f structField) typeError(v reflect.Value) error {
	return &TypeError{Want: "field " + strconv.Quote(f.name), Got: "a " + v.Type().String() + ", which no hash value fills"}
}

func (f structField) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("zipline: field %q: %w", f.name, err)
}
