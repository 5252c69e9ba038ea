package testbed

import (
	"context"
	"errors"
	"testing"
)

func TestStartKillRestart(t *testing.T) {
	s, err := Start(Config{})
	if errors.Is(err, ErrNoBinary) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	ctx := context.Background()
	if _, err := s.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	v, err := s.Do(ctx, "GET", "k")
	if err != nil || string(v.Bytes()) != "v" {
		t.Fatalf("GET: %v %v", v, err)
	}
	s.Kill()
	if _, err := s.Do(ctx, "PING"); err == nil {
		t.Fatal("killed server still answers")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	v, err = s.Do(ctx, "GET", "k")
	if err != nil || !v.IsNull() {
		t.Fatalf("restarted server (no persistence) returned %v %v, want nil", v, err)
	}
	if mem, err := s.UsedMemory(ctx); err != nil || mem <= 0 {
		t.Fatalf("UsedMemory: %v %v", mem, err)
	}
}
