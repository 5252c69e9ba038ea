package cmdspec

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Ask sends one command on a fresh connection to addr and returns its reply
// as the client's parser reads it (what Parse takes). With proto 3 it says
// HELLO 3 first, in the same write, and reads the reply as RESP3. It is how
// the spec's fetcher and tests ask a server about its commands.
func Ask(ctx context.Context, addr string, proto int, args ...string) (resp.Value, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return resp.Value{}, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	} else {
		c.SetDeadline(time.Now().Add(time.Minute))
	}
	var buf []byte
	if proto == 3 {
		buf = resp.AppendArrayLen(buf, 2)
		buf = resp.AppendBulkString(buf, "HELLO")
		buf = resp.AppendBulkString(buf, "3")
	}
	buf = resp.AppendArrayLen(buf, len(args))
	for _, a := range args {
		buf = resp.AppendBulkString(buf, a)
	}
	if _, err := c.Write(buf); err != nil {
		return resp.Value{}, err
	}
	r := resp.NewReader(c, 0, resp.Limits{MaxAggregateLen: 1 << 20})
	var v resp.Value
	if proto == 3 {
		if err := r.ReadValue(&v); err != nil { // HELLO's map
			return v, err
		}
	}
	if err := r.ReadValue(&v); err != nil {
		return v, err
	}
	if v.IsError() {
		return v, fmt.Errorf("cmdspec: %s: %s", args[0], v.Bytes())
	}
	return v, nil
}
