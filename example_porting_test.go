package zipline_test

// A small service as it was written for go-redis v9, ported to zipline
// (README, "Coming from go-redis"). Each method keeps its go-redis
// original in a comment. It runs against the server the package's tests
// start (ZIPLINE_EXAMPLE_ADDR).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/ziplinekv/zipline"
)

// sessions stores web sessions, counts requests per user for a rate
// limit, and keeps a feed of recent events.
type sessions struct {
	rdb *zipline.Client // was *redis.Client
}

// newSessions connects from a REDIS_URL written for go-redis: its pool
// options mean nothing to a pipelined client and are accepted, ignored.
func newSessions(redisURL string) (*sessions, error) {
	// opts, err := redis.ParseURL(redisURL)
	// rdb := redis.NewClient(opts)
	opts, err := zipline.ParseURL(redisURL)
	if err != nil {
		return nil, err
	}
	rdb, err := zipline.New(opts) // connects now; Options.LazyConnect defers it
	if err != nil {
		return nil, err
	}
	return &sessions{rdb: rdb}, nil
}

// Save stores a session for ttl.
func (s *sessions) Save(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	// return s.rdb.Set(ctx, "session:"+id, data, ttl).Err()
	return s.rdb.Set(ctx, "session:"+id, data, zipline.EX(ttl))
}

// Load returns a session, or ok false when there is none.
func (s *sessions) Load(ctx context.Context, id string) (data []byte, ok bool, err error) {
	// data, err := s.rdb.Get(ctx, "session:"+id).Bytes()
	// if err == redis.Nil { return nil, false, nil }
	data, err = s.rdb.Get(ctx, "session:"+id)
	if errors.Is(err, zipline.Nil) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// Allow counts a request of user in the current minute and says whether
// it is within limit: INCR and EXPIRE in one transaction.
func (s *sessions) Allow(ctx context.Context, user string, limit int64) (bool, error) {
	key := rateKey(user, time.Now())
	// var incr *redis.IntCmd
	// _, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
	// 	incr = p.Incr(ctx, key)
	// 	p.Expire(ctx, key, time.Minute)
	// 	return nil
	// })
	var incr *zipline.Future[int64]
	err := s.rdb.TxPipelined(ctx, func(tx *zipline.Batch) error {
		incr = tx.Incr(key)
		tx.Expire(key, time.Minute)
		return nil
	})
	if err != nil {
		return false, err
	}
	return incr.Val() <= limit, nil
}

// rateKey is the counter of user's requests in the minute of t.
func rateKey(user string, t time.Time) string {
	return "rate:" + user + ":" + strconv.FormatInt(t.Unix()/60, 10)
}

// Record appends an event to user's feed, keeping the newest 100.
func (s *sessions) Record(ctx context.Context, user, event string) error {
	// _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
	// 	p.LPush(ctx, "feed:"+user, event)
	// 	p.LTrim(ctx, "feed:"+user, 0, 99)
	// 	return nil
	// })
	return s.rdb.Pipelined(ctx, func(b *zipline.Batch) error {
		b.LPush("feed:"+user, []byte(event))
		b.LTrim("feed:"+user, 0, 99)
		return nil
	})
}

// Users lists the users who have a feed.
func (s *sessions) Users(ctx context.Context) ([]string, error) {
	// iter := s.rdb.Scan(ctx, 0, "feed:*", 100).Iterator()
	// for iter.Next(ctx) { users = append(users, iter.Val()[5:]) }
	// return users, iter.Err()
	var users []string
	for key, err := range s.rdb.Scan(ctx, zipline.ScanOptions{Match: "feed:*", Count: 100}) {
		if err != nil {
			return nil, err
		}
		users = append(users, key[len("feed:"):])
	}
	slices.Sort(users)
	return users, nil
}

// A go-redis service, ported.
func Example_portedFromGoRedis() {
	ctx := context.Background()
	url := "redis://" + os.Getenv("ZIPLINE_EXAMPLE_ADDR") + "/0?pool_size=20&min_idle_conns=5&max_retries=3&read_timeout=3s"
	s, err := newSessions(url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.rdb.Close()
	s.rdb.Del(ctx, "session:abc", "feed:ada", "feed:bob", rateKey("ada", time.Now()))

	_, ok, _ := s.Load(ctx, "abc")
	fmt.Println("before saving:", ok)
	s.Save(ctx, "abc", []byte(`{"user":"ada"}`), time.Hour)
	data, ok, _ := s.Load(ctx, "abc")
	fmt.Println("after saving:", ok, string(data))

	for i := range 3 {
		allowed, _ := s.Allow(ctx, "ada", 2)
		fmt.Println("request", i+1, "allowed:", allowed)
	}

	s.Record(ctx, "ada", "login")
	s.Record(ctx, "bob", "logout")
	users, _ := s.Users(ctx)
	fmt.Println("users with a feed:", users)
	// Output:
	// before saving: false
	// after saving: true {"user":"ada"}
	// request 1 allowed: true
	// request 2 allowed: true
	// request 3 allowed: false
	// users with a feed: [ada bob]
}
