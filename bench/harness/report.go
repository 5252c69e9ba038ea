package harness

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Header is how every benchmark report starts: a title, the command that
// produced it, its settings, the environment and the clients compared.
type Header struct {
	Title    string
	Command  string
	Settings string
	Env      []string // Environment's lines
	Clients  []Client
}

// Client is one client compared in a report, with how it is used.
type Client struct{ Name, Desc string }

// Write writes the header as markdown.
func (h *Header) Write(w io.Writer) {
	fmt.Fprintf(w, "# %s\n\nCommand:\n\n```\n%s\n```\n\nSettings: %s\n\n", h.Title, h.Command, h.Settings)
	for _, e := range h.Env {
		fmt.Fprintf(w, "- %s\n", e)
	}
	fmt.Fprintf(w, "\nClients:\n\n")
	for _, c := range h.Clients {
		fmt.Fprintf(w, "- `%s`: %s\n", c.Name, c.Desc)
	}
}

// Save writes a report to path, or nothing when path is empty. The
// benchmarks save after every run, so an interrupted one keeps its data.
func Save(path string, write func(io.Writer)) error {
	if path == "" {
		return nil
	}
	var buf bytes.Buffer
	write(&buf)
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// Publish writes a report to stdout and saves it to path.
func Publish(path string, write func(io.Writer)) error {
	var buf bytes.Buffer
	write(&buf)
	if _, err := os.Stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	return Save(path, write)
}
