package bench

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"time"
)

// The data set every benchmark uses: NumKeys keys of KeyLen bytes, each
// holding a value of the cell's size, written by Prefill before the cell.
const (
	NumKeys   = 1000
	KeyLen    = 16
	keyPrefix = "zl:bench:" // + 7 digits = KeyLen bytes
)

// Keys are the benchmark keys; callers must not modify the slice.
var Keys = func() []string {
	keys := make([]string, NumKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s%07d", keyPrefix, i)
		if len(keys[i]) != KeyLen {
			panic("bench: bad key length")
		}
	}
	return keys
}()

// Value returns a value of size bytes (a repeating a–z pattern).
func Value(size int) []byte {
	v := make([]byte, size)
	for i := range v {
		v[i] = 'a' + byte(i%26)
	}
	return v
}

// Prefill writes every key with val over one pipelined connection of its
// own, independent of the clients under test.
func Prefill(addr string, val []byte) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 0, NumKeys*(len(val)+64))
	for _, k := range Keys {
		buf = append(buf, "*3\r\n$3\r\nSET\r\n$"...)
		buf = strconv.AppendInt(buf, int64(len(k)), 10)
		buf = append(buf, "\r\n"...)
		buf = append(buf, k...)
		buf = append(buf, "\r\n$"...)
		buf = strconv.AppendInt(buf, int64(len(val)), 10)
		buf = append(buf, "\r\n"...)
		buf = append(buf, val...)
		buf = append(buf, "\r\n"...)
	}
	errc := make(chan error, 1)
	go func() { _, err := c.Write(buf); errc <- err }()
	r := bufio.NewReader(c)
	for i := 0; i < NumKeys; i++ {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if line != "+OK\r\n" {
			return fmt.Errorf("bench: prefill SET reply %q", line)
		}
	}
	return <-errc
}
