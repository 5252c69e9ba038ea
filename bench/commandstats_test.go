package bench

import "testing"

// INFO commandstats parsed, differenced and printed per read, as
// cachebench and cscbench report a cached read's server commands.
func TestCommandCalls(t *testing.T) {
	before, err := ParseCommandStats(map[string]string{
		"cmdstat_get": "calls=10,usec=5,usec_per_call=0.50", "cmdstat_info": "calls=1,usec=1", "redis_version": "7.0.15",
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := ParseCommandStats(map[string]string{
		"cmdstat_get": "calls=30,usec=15", "cmdstat_client|caching": "calls=10,usec=1", "cmdstat_info": "calls=2,usec=2",
	})
	if err != nil {
		t.Fatal(err)
	}
	d := after.Since(before, map[string]bool{"info": true})
	if d.Total() != 30 || d["get"] != 20 || d["client|caching"] != 10 || d["info"] != 0 {
		t.Fatalf("since: %v", d)
	}
	if got, want := d.Per(20, -1), "GET 1, CLIENT CACHING 0.5"; got != want {
		t.Fatalf("per read: %q, want %q", got, want)
	}
	if got := (CommandCalls{}).Per(5, 3); got != "none" {
		t.Fatalf("nothing ran: %q", got)
	}
	if sum := CommandCalls(nil).Add(d).Add(d); sum["get"] != 40 {
		t.Fatalf("add: %v", sum)
	}
	if _, err := ParseCommandStats(map[string]string{"cmdstat_get": "calls=x"}); err == nil {
		t.Fatal("a malformed line parsed")
	}
}
