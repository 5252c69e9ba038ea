package cmdspec

import "testing"

// The routing tips COMMAND INFO lists are read into the two policies, and
// every policy's name reads back as itself.
func TestReadTips(t *testing.T) {
	c := &Command{Name: "dbsize"}
	c.readTips([]string{"nondeterministic_output", "request_policy:all_shards", "RESPONSE_POLICY:agg_sum"})
	if c.Request != AllShards || c.Response != AggSum {
		t.Fatalf("policies %s, %s; want all_shards, agg_sum", c.Request, c.Response)
	}
	// A newer server's policy routes by default rather than failing the
	// whole table.
	c.readTips([]string{"request_policy:everywhere", "response_policy:agg_median"})
	if c.Request != RequestDefault || c.Response != ResponseDefault {
		t.Fatalf("unknown policies read as %s, %s; want the defaults", c.Request, c.Response)
	}
	for p := RequestDefault + 1; p <= RequestSpecial; p++ {
		var back RequestPolicy
		if b, _ := p.MarshalText(); back.UnmarshalText(b) != nil || back != p {
			t.Errorf("request policy %d: %q reads back as %d", p, b, back)
		}
	}
	for p := ResponseDefault + 1; p <= ResponseSpecial; p++ {
		var back ResponsePolicy
		if b, _ := p.MarshalText(); back.UnmarshalText(b) != nil || back != p {
			t.Errorf("response policy %d: %q reads back as %d", p, b, back)
		}
	}
}
