package main

import (
	"io"
	"os"
	"testing"
)

// stdoutOf runs fn with os.Stdout sent to a pipe and returns what it wrote.
func stdoutOf(t *testing.T, fn func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	err = fn()
	os.Stdout = saved
	w.Close()
	return string(<-done), err
}
