package zipline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

type structTag struct {
	Name  string         `redis:"name"`
	Count *int64         `redis:"count"`
	Wait  time.Duration  `redis:"wait"`
	Note  string         `redis:"note,omitempty"`
	Skip  string         `redis:"-"`
	Tags  map[string]int `redis:"tags,omitempty"`
}

// HSetStruct and FieldMap.Scan: pointers, durations, omitempty and "-";
// a field of a type no hash value holds, or a stored value that does not
// parse, is an error that names the field and never quotes the value.
func TestStructHashes(t *testing.T) {
	c, _ := newTestClient(t, Options{})
	ctx := context.Background()
	n := int64(5)
	if got, err := c.HSetStruct(ctx, "h", &structTag{Name: "x", Count: &n, Wait: 3 * time.Second, Skip: "no"}); err != nil || got != 3 {
		t.Fatalf("HSetStruct = %d, %v; want 3 new fields (note omitted, skip and tags left out)", got, err)
	}
	m := must(c.HGetAll(ctx, "h"))(t)
	if _, ok := m["note"]; ok || len(m) != 3 {
		t.Fatalf("stored fields %v", m)
	}
	var s structTag
	if err := m.Scan(&s); err != nil || s.Name != "x" || s.Count == nil || *s.Count != 5 || s.Wait != 3*time.Second {
		t.Fatalf("Scan = %+v, %v", s, err)
	}
	if _, err := c.HSetStruct(ctx, "h", structTag{Tags: map[string]int{"a": 1}}); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), `"tags"`) {
		t.Errorf("a map field: %v, want an *ArgumentError naming it", err)
	}
	if _, err := c.HSetStruct(ctx, "h", 7); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a non-struct: %v", err)
	}
	if err := m.Scan(s); err == nil {
		t.Error("Scan into a struct value (not a pointer) succeeded")
	}
	must(c.HSet(ctx, "h", FieldValue{Field: "count", Value: []byte("secret-not-a-number")}))(t)
	err := c.HGetStruct(ctx, "h", &s)
	var te *TypeError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), `"count"`) || strings.Contains(err.Error(), "secret") {
		t.Errorf("a value that does not parse: %v, want a *TypeError naming the field and not the value", err)
	}
}
