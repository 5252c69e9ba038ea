package zipline

import (
	"context"
	"strings"
)

// Ping checks that the server answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := do(ctx, c, decOK, "PING")
	return err
}

// Echo returns msg, sent to the server and back.
func (c *Client) Echo(ctx context.Context, msg string) (string, error) {
	return do(ctx, c, decString, "ECHO", str(msg))
}

// DBSize returns the number of keys in the selected database.
func (c *Client) DBSize(ctx context.Context) (int64, error) {
	return do(ctx, c, decInt, "DBSIZE")
}

// FlushDB deletes every key of the selected database.
func (c *Client) FlushDB(ctx context.Context) error {
	_, err := do(ctx, c, decOK, "FLUSHDB")
	return err
}

// FlushAll deletes every key of every database.
func (c *Client) FlushAll(ctx context.Context) error {
	_, err := do(ctx, c, decOK, "FLUSHALL")
	return err
}

// Info returns the fields of INFO sections ("memory", "server", ...; none
// means the default set) as a map.
func (c *Client) Info(ctx context.Context, sections ...string) (map[string]string, error) {
	text, err := do(ctx, c, decString, "INFO", strs(sections)...)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string)
	for line := range strings.Lines(text) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && !strings.HasPrefix(k, "#") {
			m[k] = v
		}
	}
	return m, nil
}

// ConfigGet returns the server configuration parameters matching pattern.
func (c *Client) ConfigGet(ctx context.Context, pattern string) (map[string]string, error) {
	v, err := do(ctx, c, decValue, "CONFIG", str("GET"), str(pattern))
	if err != nil {
		return nil, err
	}
	m, err := v.AsMap()
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(m))
	for k, val := range m {
		out[k], _ = val.AsString()
	}
	return out, nil
}

// Publish sends msg to channel and returns how many subscribers got it.
// With Compression.Families including PubSub, msg is compressed like a
// stored value; subscribers expand it with Client.DecodeValue.
func (c *Client) Publish(ctx context.Context, channel string, msg []byte) (int64, error) {
	return do(ctx, c, decInt, "PUBLISH", str(channel), message(msg))
}
