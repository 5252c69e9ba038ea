package zipline

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/ziplinekv/zipline/internal/testkit"
)

func TestKeySlot(t *testing.T) {
	// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
	for key, want := range map[string]int32{
		"123456789":            0x31C3 & (slotCount - 1), // the CRC16/XMODEM check value 0x31C3
		"foo":                  12182,
		"{user1000}.following": keySlot("user1000"),
		"foo{}{bar}":           keySlot("foo{}{bar}"), // empty first tag: the whole key
		"foo{{bar}}zap":        keySlot("{bar"),
		"foo{bar}{zap}":        keySlot("bar"),
		"":                     0,
	} {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, want)
		}
	}
}

// keySlot agrees with the server's CLUSTER KEYSLOT on random keys, hash
// tags included.
func TestKeySlotMatchesServer(t *testing.T) {
	srv := testkit.NewServer(t, testkit.Config{Args: []string{"--cluster-enabled", "yes"}})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		key := "k" + strconv.Itoa(rng.IntN(1<<30))
		switch i % 4 {
		case 1:
			key = "{" + key + "}x"
		case 2:
			key = "a{}" + key
		case 3:
			key = string([]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), '{', byte(rng.IntN(256)), '}'})
		}
		v, err := srv.Do(ctx, "CLUSTER", "KEYSLOT", key)
		if err != nil {
			t.Fatal(err)
		}
		if got := keySlot(key); int64(got) != v.Int() {
			t.Fatalf("keySlot(%q) = %d, server says %d", key, got, v.Int())
		}
	}
}
