package cmdspec

import (
	"context"
	"net"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// doRESP3 sends HELLO 3 and one command on a fresh connection and returns
// the command's reply, read as RESP3.
func doRESP3(ctx context.Context, addr string, args ...string) (resp.Value, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return resp.Value{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	buf := resp.AppendArrayLen(nil, 2)
	buf = resp.AppendBulkString(buf, "HELLO")
	buf = resp.AppendBulkString(buf, "3")
	buf = resp.AppendArrayLen(buf, len(args))
	for _, a := range args {
		buf = resp.AppendBulkString(buf, a)
	}
	if _, err := c.Write(buf); err != nil {
		return resp.Value{}, err
	}
	r := resp.NewReader(c, 0, resp.Limits{MaxAggregateLen: 1 << 20})
	var v resp.Value
	if err := r.ReadValue(&v); err != nil { // HELLO's map
		return v, err
	}
	err = r.ReadValue(&v)
	return v, err
}
