package analyze

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// costsJSON is the cost table: the constants of each measured Profile and
// the cells they were fitted to. TestCostTable writes it:
//
//	cd cmd/zipline && go test ./analyze -run '^TestCostTable$' -count=1 -update
//
// which starts Redis 7.0 (Debian's, jemalloc) and Valkey 9.1
// (.tools/bin/valkey-server, libc malloc), measures each cell as the drop
// of used_memory when its keys are deleted, and fits the constants.
//
//go:embed testdata/costs.json
var costsJSON []byte

// CostTable is testdata/costs.json.
type CostTable struct {
	// Command regenerates the table.
	Command  string         `json:"command"`
	Profiles []ProfileTable `json:"profiles"`
}

// ProfileTable is one measured Profile and its cells.
type ProfileTable struct {
	Profile
	Cells []Cell `json:"cells"`
}

// Cell is one measurement: Bytes per key (string, int), per hash (hash)
// or per field (volatile) of a structure.
type Cell struct {
	// Kind is "string" (a string of Value bytes), "int" (the integer Int),
	// "hash" (a listpack hash of Fields integer fields with values of Value
	// bytes) or "volatile" (a hash of Fields fields of Field bytes, each
	// with a TTL, values of Value bytes).
	Kind   string  `json:"kind"`
	Key    int     `json:"key"`
	Value  int     `json:"value,omitempty"`
	Int    string  `json:"int,omitempty"`
	TTL    bool    `json:"ttl,omitempty"`
	Fields int     `json:"fields,omitempty"`
	Field  int     `json:"field,omitempty"`
	Bytes  float64 `json:"bytes"`
}

// loadCostTable parses the embedded table.
func loadCostTable() (*CostTable, error) {
	var t CostTable
	if err := json.Unmarshal(costsJSON, &t); err != nil {
		return nil, fmt.Errorf("analyze: testdata/costs.json: %w", err)
	}
	return &t, nil
}

// ProfileFor picks the profile that prices a server: the measured one of
// its model (Redis and Valkey before 8.1: dict; Valkey 8.1 and later:
// kvobj), with its allocator. It says in note when the server is not the
// one measured (another version or allocator), in which case the costs are
// the model's with the measured profile's constants.
func ProfileFor(s *Server) (p *Profile, note string, err error) {
	t, err := loadCostTable()
	if err != nil {
		return nil, "", err
	}
	model := DictModel
	if s.Kind == "valkey" && s.AtLeast(8, 1) {
		model = KVObjModel
	}
	alloc := Jemalloc
	if strings.HasPrefix(s.Allocator, "libc") {
		alloc = Libc
	}
	var base *ProfileTable
	for i := range t.Profiles {
		pt := &t.Profiles[i]
		if pt.Model != model {
			continue
		}
		if base == nil || pt.Allocator == alloc {
			base = pt
		}
	}
	if base == nil {
		return nil, "", fmt.Errorf("analyze: the cost table has no %s profile", model)
	}
	prof := base.Profile
	var notes []string
	if !strings.HasPrefix(s.Allocator, "jemalloc") && !strings.HasPrefix(s.Allocator, "libc") {
		notes = append(notes, fmt.Sprintf("allocator %s is priced as %s", s.Allocator, prof.Allocator))
	}
	if prof.Allocator != alloc {
		prof.Allocator = alloc
		prof.Name = fmt.Sprintf("%s-%s (derived)", strings.TrimSuffix(base.Name, "-"+string(base.Allocator)), alloc)
		prof.Measured = ""
		notes = append(notes, fmt.Sprintf("costs derived from %s with %s's size classes (this allocator was not measured)",
			base.Name, alloc))
	}
	if !strings.HasPrefix(base.Measured, s.Kind+" "+s.MajorMinor()) {
		notes = append(notes, fmt.Sprintf("%s %s was not measured: priced with the model of %s", s.Kind, s.Version, base.Measured))
	}
	// Field TTL: Valkey 9 keeps a hash with volatile fields as a hashtable
	// (measured); Redis 7.4 and 8 keep it compact (listpackex), which was
	// not measured: each field is priced with a listpack entry for its
	// expiry.
	switch {
	case !s.FieldTTL:
		prof.VolatileField, prof.FieldTTLCompact = nil, false
	case s.Kind == "redis":
		prof.VolatileField, prof.FieldTTLCompact = nil, true
		notes = append(notes, "hash fields with TTLs (listpackex) are estimated, not measured")
	case len(prof.VolatileField) == 0:
		notes = append(notes, "hash fields with TTLs were not measured on this kind of server")
	}
	return &prof, strings.Join(notes, "; "), nil
}
