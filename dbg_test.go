package zipline

import (
	"context"
	"testing"

	"github.com/ziplinekv/zipline/internal/testkit"
)

func TestDbgRO(t *testing.T) {
	cl := testkit.NewCluster(t, testkit.ClusterConfig{})
	v, _ := cl.Nodes()[0].Do(context.Background(), "CLUSTER", "SHARDS")
	t.Log(v.String())
	vw, err := parseShards(v, cl.Nodes()[0].Addr)
	t.Logf("%+v %v", vw, err)
}
