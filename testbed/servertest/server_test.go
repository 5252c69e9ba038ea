package servertest

import (
	"context"
	"testing"
	"time"

	"github.com/ziplinekv/zipline/testbed"
)

func TestPauseResumes(t *testing.T) {
	srv := NewServer(t, testbed.Config{})
	ping := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_, err := srv.Do(ctx, "PING")
		return err
	}
	resume := Pause(t, srv)
	// A bounded check that a stopped server does not answer.
	if err := ping(200 * time.Millisecond); err == nil {
		t.Fatal("a paused server answered")
	}
	resume()
	resume() // idempotent
	if err := ping(5 * time.Second); err != nil {
		t.Fatalf("after resume: %v", err)
	}

	// A test that ends with the server paused leaves it running.
	t.Run("left paused", func(t *testing.T) { Pause(t, srv) })
	if err := ping(5 * time.Second); err != nil {
		t.Fatalf("after a test left the server paused: %v", err)
	}

	// Kill works on a paused server, and Restart brings it back.
	Pause(t, srv)
	srv.Kill()
	Restart(t, srv)
	if err := ping(5 * time.Second); err != nil {
		t.Fatalf("after Restart: %v", err)
	}
}
