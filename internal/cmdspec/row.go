package cmdspec

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// ServerSpec is what the servers the project installs say of their
// commands (servers.json, written by `make spec`): the input of go
// generate.
type ServerSpec struct {
	Servers  []Server `json:"servers"`
	Commands []*Row   `json:"commands"`
}

// Server is one server the spec was read from, oldest first.
type Server struct {
	Name    string `json:"name"` // "redis", "valkey"
	Version string `json:"version"`
}

// Row is one command as the servers describe it: COMMAND INFO's arity, routing tips,
// flags and key specs, and COMMAND DOCS' group, summary and arguments.
type Row struct {
	Name       string    `json:"name"` // lower case; "container|sub" for a subcommand
	Group      string    `json:"group,omitempty"`
	Summary    string    `json:"summary,omitempty"`
	Deprecated bool      `json:"deprecated,omitempty"`
	Arity      int       `json:"arity"`
	Flags      []string  `json:"flags,omitempty"`
	KeySpecs   []KeySpec `json:"key_specs,omitempty"`
	// RequestPolicy and ResponsePolicy are the servers' routing tips for
	// a cluster.
	RequestPolicy  RequestPolicy  `json:"request_policy,omitzero"`
	ResponsePolicy ResponsePolicy `json:"response_policy,omitzero"`
	// Servers maps each server that has the command to the version that
	// added it ("" if its docs do not say).
	Servers     map[string]string `json:"servers"`
	Arguments   []Argument        `json:"arguments,omitempty"`
	Subcommands []*Row            `json:"subcommands,omitempty"`
	// Since is a server's version for the command while the spec is
	// being read; the merged spec keeps it in Servers.
	Since string `json:"-"`
}

// Argument is one argument of a command, as COMMAND DOCS gives it.
type Argument struct {
	Name      string     `json:"name"`
	Type      string     `json:"type"`
	Token     string     `json:"token,omitempty"`
	Flags     []string   `json:"flags,omitempty"`
	Since     string     `json:"since,omitempty"`
	Arguments []Argument `json:"arguments,omitempty"`
}

// ReadServerSpec reads servers.json.
func ReadServerSpec(path string) (*ServerSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s ServerSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("cmdspec: %s: %w", path, err)
	}
	return &s, nil
}

// MarshalText names a begin search kind in servers.json.
func (k BeginKind) MarshalText() ([]byte, error) {
	return []byte([...]string{"unknown", "index", "keyword"}[k]), nil
}

// UnmarshalText reads a begin search kind.
func (k *BeginKind) UnmarshalText(b []byte) error {
	switch strings.ToLower(string(b)) {
	case "unknown":
		*k = BeginUnknown
	case "index":
		*k = BeginIndex
	case "keyword":
		*k = BeginKeyword
	default:
		return fmt.Errorf("cmdspec: begin search kind %q", b)
	}
	return nil
}

// MarshalText names a find keys kind in servers.json.
func (k FindKind) MarshalText() ([]byte, error) {
	return []byte([...]string{"unknown", "range", "keynum"}[k]), nil
}

// UnmarshalText reads a find keys kind.
func (k *FindKind) UnmarshalText(b []byte) error {
	switch strings.ToLower(string(b)) {
	case "unknown":
		*k = FindUnknown
	case "range":
		*k = FindRange
	case "keynum":
		*k = FindKeynum
	default:
		return fmt.Errorf("cmdspec: find keys kind %q", b)
	}
	return nil
}
