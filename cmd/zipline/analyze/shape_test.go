package analyze

import (
	"fmt"
	"testing"
	"time"
)

func TestShapeOf(t *testing.T) {
	for _, tc := range []struct {
		key, pattern, prefix string
		tailInt              bool
		id                   uint64
	}{
		{"user:12345", "user:<int>", "user:", true, 12345},
		{"user:0", "user:<int>", "user:", true, 0},
		{"user:007", "user:<num>", "user:", false, 0},
		{"user:-5", "user:<num>", "user:", false, 0},
		{"user:12345:cart", "user:<int>:cart", "user:", false, 0},
		{"feed:42:items", "feed:<int>:items", "feed:", false, 0},
		{"session:9f86d081884c7d659a2feb5e3f6a0c8b", "session:<hex32>", "session:", false, 0},
		{"doc:123e4567-e89b-12d3-a456-426614174000", "doc:<uuid>", "doc:", false, 0},
		{"page:2025-03-14:7", "page:<date>:<int>", "page:", false, 0},
		{"stats:2025-03", "stats:<date>", "stats:", false, 0},
		{"rate:10.0.0.1", "rate:<ip>", "rate:", false, 0},
		{"mail:ada@example.com", "mail:<email>", "mail:", false, 0},
		{"tok:eyJhbGciOiJIUzI1NiJ9abc", "tok:<token>", "tok:", false, 0},
		{"cache:api:v2:users", "cache:api:v2:users", "", false, 0},
		{"{user:7}:cart", "{user:<int>}:cart", "{user:", false, 0},
		{"12345", "<int>", "", false, 0},
		{"9f86d081884c7d659a2feb5e3f6a0c8b", "<hex32>", "", false, 0},
		{"plain", "plain", "", false, 0},
		{"a:b:c:d:e:f:g:h:i:j:k:l:m:n", "a:b:c:d:e:f:g:h:i:j:k:<rest>", "", false, 0},
	} {
		sh := shapeOf(tc.key)
		if sh.pattern != tc.pattern || sh.prefix != tc.prefix || sh.tailInt != tc.tailInt || sh.id != tc.id {
			t.Errorf("%q: %+v, want pattern %q prefix %q tailInt %v id %d", tc.key, sh, tc.pattern, tc.prefix, tc.tailInt, tc.id)
		}
	}
}

// Literal segments that take many values merge into <str>, the prefix
// shrinks to what stays literal, and the merged pattern keeps every count.
func TestMergeSiblings(t *testing.T) {
	tr := newTracker(10, 1<<20, 1000)
	for i := range 40 {
		tr.add(fmt.Sprintf("user:name%c%c:cart", 'a'+i%26, 'a'+i/26), "string", 0, 10)
	}
	for i := range 5 {
		tr.add(fmt.Sprintf("user:%d", i), "string", time.Minute, 10)
	}
	tr.mergeSiblings(16)
	p := tr.patterns["user:<str>:cart"]
	if p == nil || p.keys != 40 || p.prefix != "user:" {
		t.Fatalf("patterns after merging: %v", keysOf(tr.patterns))
	}
	if q := tr.patterns["user:<int>"]; q == nil || q.keys != 5 || q.ttlKeys != 5 || q.tailInts != 5 {
		t.Fatalf("user:<int> was merged or miscounted: %+v", q)
	}
	if len(tr.patterns) != 2 {
		t.Errorf("patterns: %v", keysOf(tr.patterns))
	}
}

// Past MaxPatterns, new shapes go to (other), after a merge has tried to
// make room.
func TestTrackerBound(t *testing.T) {
	tr := newTracker(10, 1<<20, 5)
	for i := range 20 {
		tr.add(fmt.Sprintf("k%c:1", 'a'+i), "string", 0, 10)
	}
	if len(tr.patterns) > 6 || tr.patterns[otherPattern] == nil || tr.patterns[otherPattern].keys != 15 {
		t.Fatalf("patterns: %v", keysOf(tr.patterns))
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestChooseZipAs(t *testing.T) {
	taken := map[string]bool{"u:": true, "s:": true}
	is := func(z string) bool { return taken[z] }
	for _, tc := range []struct{ prefix, want string }{
		{"user:", "us:"},
		{"session:", "se:"},
		{"cache:user:", "cu:"},
		{"views:", "v:"},
		{"u:", "u1:"},
	} {
		if got := chooseZipAs(tc.prefix, is); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.prefix, got, tc.want)
		}
	}
}
